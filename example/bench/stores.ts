/**
 * The bench server's stores: accounts in memory or PostgreSQL, sessions in memory or Redis, all seeded
 * alike. Every statement the pg Pool runs and every command the Redis client sends is counted by name,
 * so the bench can show how many round trips each request costs.
 */
import type { Command, Redis } from 'ioredis'
import type pg from 'pg'
import { MemoryAccountStore, MemorySessionStore, type AccountStore, type AttemptStore, type OneTimeTokenStore, type SessionStore } from '../../lib/index.js'
import { ACTIVE_ACCOUNTS, activeEmail, activeId, INACTIVE_ACCOUNTS, inactiveEmail, inactiveId } from './settings.js'

export type AccountsBackend = 'memory' | 'postgres'
export type SessionsBackend = 'memory' | 'redis'

export interface BenchStoreOptions {
  accounts: AccountsBackend
  sessions: SessionsBackend
  /** The argon2 hash every seeded account shares. */
  passwordHash: string
  redisUrl?: string
  /** Prefix of every Redis key this server writes. */
  redisPrefix?: string
  databaseUrl?: string
  /** A schema of this server's own; created at start, dropped at close. */
  pgSchema?: string
  /** The pg Pool's `max`. */
  pgPoolSize?: number
  /** The stores' `preparedStatements` (default true); false is what a transaction pooler needs. */
  pgPreparedStatements?: boolean
}

/** Statements run (by statement name) and Redis commands sent (by command name) so far. */
export interface RoundTrips {
  postgres: Record<string, number>
  redis: Record<string, number>
}

export interface BenchStores {
  accounts: AccountStore & { findByEmail: AccountStore['findByEmail'] }
  sessions: SessionStore
  /** With sessions in Redis, one-time tokens there too; undefined: the plugin's memory default. */
  oneTimeTokens: OneTimeTokenStore | undefined
  /** Undefined: the plugin's memory default. */
  attempts?: AttemptStore
  roundTrips: RoundTrips
  /** What the stores run on, for the report. */
  description: string
  close: () => Promise<void>
}

// The drivers load only when a backend needs them: on memory stores they would add about 13 MB of RSS
// to the overload scenario's peak.

/** The pool settings the bench recommends for PostgreSQL on the authenticated path (README, example/bench/README.md). */
export async function postgresPool (connectionString: string, max: number): Promise<pg.Pool> {
  const { default: { Pool } } = await import('pg')
  return new Pool({
    connectionString,
    max,
    // Bounded waits: a dead or blackholed server fails requests fast instead of queueing them.
    connectionTimeoutMillis: 2000,
    query_timeout: 2000
  })
}

/**
 * The Redis client settings the bench runs with: an IP address (a name lookup would take a thread of
 * libuv's pool, which the hand-written login's argon2 keeps busy), auto-pipelining (the commands of one event-loop turn share one write),
 * and bounded waits.
 */
export async function redisClient (url: string): Promise<Redis> {
  const { Redis } = await import('ioredis')
  return new Redis(url, { enableAutoPipelining: true, connectTimeout: 2000, commandTimeout: 1000, maxRetriesPerRequest: 1 })
}

function count (counts: Record<string, number>, name: string): void {
  counts[name] = (counts[name] ?? 0) + 1
}

function countCommands (client: Redis, counts: Record<string, number>): void {
  const send = client.sendCommand.bind(client)
  client.sendCommand = (command: Command, ...rest: unknown[]) => {
    count(counts, command.name)
    return (send as (...args: unknown[]) => unknown)(command, ...rest)
  }
}

function countStatements (pool: pg.Pool, counts: Record<string, number>): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown
  pool.query = ((config: unknown, ...rest: unknown[]) => {
    count(counts, typeof config === 'object' && config !== null && 'name' in config ? String(config.name) : 'unnamed')
    return query(config, ...rest)
  }) as typeof pool.query
}

async function postgresAccounts (options: BenchStoreOptions, counts: Record<string, number>) {
  const schema = options.pgSchema ?? `fpa_bench_${process.pid}`
  if (!/^\w+$/.test(schema)) throw new Error(`BENCH_PG_SCHEMA must be letters, digits and _, not ${schema}`)
  const { createPostgresSchema, PostgresAccountStore } = await import('../../lib/stores/postgres/index.js')
  const pool = await postgresPool(options.databaseUrl ?? 'postgres://postgres@127.0.0.1:5432/test', options.pgPoolSize ?? 16)
  pool.on('error', () => {})
  const table = `${schema}.auth_accounts`
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; CREATE SCHEMA "${schema}"`)
  await createPostgresSchema(pool, { accountsTable: table, sessionsTable: `${schema}.auth_sessions` })
  const seed = async (n: number, id: (i: number) => string, email: (i: number) => string, active: boolean): Promise<void> => {
    const ids = Array.from({ length: n }, (_, i) => id(i))
    const emails = Array.from({ length: n }, (_, i) => email(i))
    await pool.query(`INSERT INTO "${schema}".auth_accounts (id, email, password_hash, active)
      SELECT unnest($1::uuid[]), unnest($2::text[]), $3, $4`, [ids, emails, options.passwordHash, active])
  }
  await seed(ACTIVE_ACCOUNTS, activeId, activeEmail, true)
  await seed(INACTIVE_ACCOUNTS, inactiveId, inactiveEmail, false)
  await pool.query(`ANALYZE "${schema}".auth_accounts`)
  countStatements(pool, counts)
  return {
    accounts: new PostgresAccountStore({ pool, table, preparedStatements: options.pgPreparedStatements ?? true }),
    close: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {})
      await pool.end()
    }
  }
}

function memoryAccounts (passwordHash: string): MemoryAccountStore {
  const accounts = new MemoryAccountStore()
  for (let i = 0; i < ACTIVE_ACCOUNTS; i++) accounts.add({ id: activeId(i), email: activeEmail(i), passwordHash })
  for (let i = 0; i < INACTIVE_ACCOUNTS; i++) accounts.add({ id: inactiveId(i), email: inactiveEmail(i), passwordHash, active: false })
  return accounts
}

/** Sessions in Redis, and one-time tokens with them: the plugin refuses shared sessions beside one-time tokens in memory. */
async function redisSessions (options: BenchStoreOptions, counts: Record<string, number>) {
  const { RedisOneTimeTokenStore, RedisSessionStore } = await import('../../lib/stores/redis/index.js')
  const client = await redisClient(options.redisUrl ?? 'redis://127.0.0.1:6379')
  client.on('error', () => {})
  await client.ping()
  countCommands(client, counts)
  const prefix = options.redisPrefix ?? `fastify-password-auth-bench:${process.pid}:sessions:`
  return {
    sessions: new RedisSessionStore({ client, prefix }),
    oneTimeTokens: new RedisOneTimeTokenStore({ client, prefix: `${prefix}one-time:` }),
    close: async () => { await client.quit() }
  }
}

export async function benchStores (options: BenchStoreOptions): Promise<BenchStores> {
  const roundTrips: RoundTrips = { postgres: {}, redis: {} }
  const closers: Array<() => Promise<void>> = []
  let accounts: BenchStores['accounts']
  if (options.accounts === 'postgres') {
    const store = await postgresAccounts(options, roundTrips.postgres)
    closers.push(store.close)
    accounts = store.accounts
  } else {
    accounts = memoryAccounts(options.passwordHash)
  }
  let sessions: SessionStore
  let oneTimeTokens: OneTimeTokenStore | undefined
  if (options.sessions === 'redis') {
    const store = await redisSessions(options, roundTrips.redis)
    closers.push(store.close)
    sessions = store.sessions
    oneTimeTokens = store.oneTimeTokens
  } else {
    sessions = new MemorySessionStore()
  }
  const description = `accounts: ${options.accounts === 'postgres' ? `PostgreSQL (pool max ${options.pgPoolSize ?? 16}${options.pgPreparedStatements === false ? ', unnamed statements' : ''})` : 'memory'}, ` +
    `sessions: ${options.sessions === 'redis' ? 'Redis (one-time tokens too)' : 'memory'}`
  return { accounts, sessions, oneTimeTokens, roundTrips, description, close: async () => { await Promise.all(closers.map(async (close) => { await close() })) } }
}
