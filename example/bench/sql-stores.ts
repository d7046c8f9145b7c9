/**
 * The bench server's stores with everything in one SQL database (BENCH_SQL): accounts, sessions, attempt
 * counters and one-time tokens in PostgreSQL, SQLite or MySQL, seeded alike, so the `sql` section prices
 * Login, GET /me and Refresh on each dialect side by side. Each server works in a schema, file or database
 * of its own, made at start and removed at close.
 */
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AccountStore, AttemptStore, OneTimeTokenStore, SessionStore } from '../../lib/index.js'
import { ACTIVE_ACCOUNTS, activeEmail, activeId, INACTIVE_ACCOUNTS, inactiveEmail, inactiveId } from './settings.js'

export type SqlDialect = 'postgres' | 'sqlite' | 'mysql'
export const SQL_BENCH_DIALECTS: readonly SqlDialect[] = ['postgres', 'sqlite', 'mysql']

export interface SqlBenchOptions {
  dialect: SqlDialect
  passwordHash: string
  /** PostgreSQL (a schema of this server's own is made in it). */
  databaseUrl?: string
  /** MySQL or MariaDB (a database of this server's own is made beside the URL's). */
  mysqlUrl?: string
  /** Names this server's schema, file or database (letters, digits and _). */
  label: string
  /** The pool's `max` / `connectionLimit` (PostgreSQL, MySQL). */
  poolSize?: number
}

export interface SqlBenchStores {
  accounts: AccountStore & { findByEmail: AccountStore['findByEmail'] }
  sessions: SessionStore
  attempts: AttemptStore
  oneTimeTokens: OneTimeTokenStore
  description: string
  close: () => Promise<void>
}

interface Seeded { id: string, email: string, active: boolean }

function seedAccounts (): Seeded[] {
  return [
    ...Array.from({ length: ACTIVE_ACCOUNTS }, (_, i) => ({ id: activeId(i), email: activeEmail(i), active: true })),
    ...Array.from({ length: INACTIVE_ACCOUNTS }, (_, i) => ({ id: inactiveId(i), email: inactiveEmail(i), active: false }))
  ]
}

async function postgresStores (options: SqlBenchOptions): Promise<SqlBenchStores> {
  const { createPostgresSchema, PostgresAccountStore, PostgresAttemptStore, PostgresOneTimeTokenStore, PostgresSessionStore } = await import('../../lib/stores/postgres/index.js')
  const { postgresPool } = await import('./stores.js')
  const schema = options.label
  const pool = await postgresPool(options.databaseUrl ?? 'postgres://postgres@127.0.0.1:5432/test', options.poolSize ?? 16)
  pool.on('error', () => {})
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; CREATE SCHEMA "${schema}"`)
  // Every table in the schema (createPostgresSchema makes all eight), so nothing lands outside it.
  const tables = Object.fromEntries(['accounts', 'sessions', 'attempts', 'oneTimeTokens', 'mfa', 'activity', 'passkeys', 'trustedDevices']
    .map((store) => [`${store}Table`, `${schema}.auth_${store.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`])) as Record<`${'accounts' | 'sessions' | 'attempts' | 'oneTimeTokens'}Table`, string>
  await createPostgresSchema(pool, tables)
  const seeded = seedAccounts()
  await pool.query(`INSERT INTO "${schema}".auth_accounts (id, email, password_hash, active)
    SELECT unnest($1::uuid[]), unnest($2::text[]), $3, unnest($4::boolean[])`, [seeded.map((a) => a.id), seeded.map((a) => a.email), options.passwordHash, seeded.map((a) => a.active)])
  await pool.query(`ANALYZE "${schema}".auth_accounts`)
  return {
    accounts: new PostgresAccountStore({ pool, table: tables.accountsTable }),
    sessions: new PostgresSessionStore({ pool, table: tables.sessionsTable }),
    attempts: new PostgresAttemptStore({ pool, table: tables.attemptsTable }),
    oneTimeTokens: new PostgresOneTimeTokenStore({ pool, table: tables.oneTimeTokensTable }),
    description: `every store in PostgreSQL (pg Pool max ${options.poolSize ?? 16})`,
    close: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {})
      await pool.end()
    }
  }
}

async function sqliteStores (options: SqlBenchOptions): Promise<SqlBenchStores> {
  const { default: Database } = await import('better-sqlite3')
  const { createSqliteSchema, SqliteAccountStore, SqliteAttemptStore, SqliteOneTimeTokenStore, SqliteSessionStore } = await import('../../lib/stores/sqlite/index.js')
  const file = join(tmpdir(), `${options.label}.db`)
  const remove = async (): Promise<void> => { await Promise.all(['', '-wal', '-shm'].map(async (suffix) => { await rm(`${file}${suffix}`, { force: true }) })) }
  await remove()
  const database = new Database(file)
  createSqliteSchema(database)
  const insert = database.prepare('INSERT INTO auth_accounts (id, email, password_hash, active, created_at) VALUES (?, ?, ?, ?, ?)')
  database.transaction(() => { for (const a of seedAccounts()) insert.run(a.id, a.email, options.passwordHash, a.active ? 1 : 0, Date.now()) })()
  database.exec('ANALYZE')
  return {
    accounts: new SqliteAccountStore({ database }),
    sessions: new SqliteSessionStore({ database }),
    attempts: new SqliteAttemptStore({ database }),
    oneTimeTokens: new SqliteOneTimeTokenStore({ database }),
    description: 'every store in SQLite (one file, WAL)',
    close: async () => {
      database.close()
      await remove()
    }
  }
}

async function mysqlStores (options: SqlBenchOptions): Promise<SqlBenchStores> {
  const { default: mysql } = await import('mysql2/promise')
  const { createMysqlSchema, MysqlAccountStore, MysqlAttemptStore, MysqlOneTimeTokenStore, MysqlSessionStore } = await import('../../lib/stores/mysql/index.js')
  const database = options.label
  const url = new URL(options.mysqlUrl ?? 'mysql://root@127.0.0.1:3306/test')
  const admin = async (sql: string): Promise<void> => {
    const connection = await mysql.createConnection({ uri: url.href, connectTimeout: 2000 })
    try { await connection.query(sql) } finally { await connection.end() }
  }
  await admin(`DROP DATABASE IF EXISTS \`${database}\``)
  await admin(`CREATE DATABASE \`${database}\``)
  url.pathname = `/${database}`
  const pool = mysql.createPool({ uri: url.href, connectionLimit: options.poolSize ?? 16, connectTimeout: 2000 })
  await createMysqlSchema(pool)
  const seeded = seedAccounts()
  for (let i = 0; i < seeded.length; i += 500) {
    const batch = seeded.slice(i, i + 500)
    await pool.query(`INSERT INTO auth_accounts (id, email, password_hash, active) VALUES ${batch.map(() => '(?, ?, ?, ?)').join(', ')}`,
      batch.flatMap((a) => [a.id, a.email, options.passwordHash, a.active ? 1 : 0]))
  }
  await pool.query('ANALYZE TABLE auth_accounts')
  return {
    accounts: new MysqlAccountStore({ pool }),
    sessions: new MysqlSessionStore({ pool }),
    attempts: new MysqlAttemptStore({ pool }),
    oneTimeTokens: new MysqlOneTimeTokenStore({ pool }),
    description: `every store in MySQL (mysql2 pool, connectionLimit ${options.poolSize ?? 16})`,
    close: async () => {
      await pool.end()
      await admin(`DROP DATABASE IF EXISTS \`${database}\``).catch(() => {})
    }
  }
}

export async function sqlBenchStores (options: SqlBenchOptions): Promise<SqlBenchStores> {
  if (!/^\w+$/.test(options.label)) throw new Error(`BENCH_SQL_LABEL must be letters, digits and _, not ${options.label}`)
  switch (options.dialect) {
    case 'postgres': return await postgresStores(options)
    case 'sqlite': return await sqliteStores(options)
    case 'mysql': return await mysqlStores(options)
  }
}

/** Whether MySQL answers at `url`. */
export async function mysqlReachable (url: string): Promise<boolean> {
  const { default: mysql } = await import('mysql2/promise')
  try {
    const connection = await mysql.createConnection({ uri: url, connectTimeout: 2000 })
    await connection.end()
    return true
  } catch {
    return false
  }
}
