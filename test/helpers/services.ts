import { Redis } from 'ioredis'
import pg from 'pg'
import type { Teardown } from './teardown.js'

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
export const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/**
 * Whether a real service answers. In CI a missing service is an error (these tests must never be
 * skipped there); elsewhere the tests skip with this reason.
 */
async function probe (name: string, check: () => Promise<void>): Promise<string | false> {
  try {
    await check()
    return false
  } catch (err) {
    const reason = `${name} is not reachable (${(err as Error).message}); start it to run these tests`
    if (process.env.CI !== undefined) throw new Error(`CI: ${reason}`)
    return reason
  }
}

export const redisUnavailable = await probe(`Redis at ${REDIS_URL}`, async () => {
  const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null })
  try { await client.connect(); await client.ping() } finally { client.disconnect() }
})

export const postgresUnavailable = await probe(`PostgreSQL at ${DATABASE_URL}`, async () => {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 1000 })
  try { await client.connect(); await client.query('SELECT 1') } finally { await client.end().catch(() => {}) }
})

/** An ioredis client for the test, disconnected in teardown. */
export function redisClient (t: Teardown, url = REDIS_URL): Redis {
  const client = new Redis(url)
  t.teardown(() => { client.disconnect() })
  return client
}

/** Deletes the keys under `prefix` (never the whole shared database): the bench's own clean-up. */
export { dropKeys as deleteKeys } from '../../example/bench/redis.js'

/**
 * A PostgreSQL schema of the test's own, dropped in teardown, with a pool whose search_path points at
 * it, so unqualified table names (the stores' defaults) land there. `url` carries the same search_path
 * for child processes.
 */
export async function postgresSchema (t: Teardown, label: string, { max = 10, through }: { max?: number, through?: string } = {}): Promise<{ pool: pg.Pool, schema: string, url: string }> {
  const schema = `test_${label}_${process.pid}_${Date.now().toString(36)}`
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  await admin.connect()
  await admin.query(`CREATE SCHEMA "${schema}"`)
  await admin.end()
  const url = `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`
  // `through`: a pooler's address, which passes no startup options: callers name the schema in their table names.
  const pool = new pg.Pool({ connectionString: through ?? url, max })
  t.teardown(async () => {
    await pool.end()
    const cleanup = new pg.Client({ connectionString: DATABASE_URL })
    await cleanup.connect()
    await cleanup.query(`DROP SCHEMA "${schema}" CASCADE`)
    await cleanup.end()
  })
  return { pool, schema, url }
}

let namespaces = 0
/** A pool on a new schema holding `sql`: one contract namespace, where unqualified SQL from the docs runs as written. */
export async function namespacePool (t: Teardown, label: string, sql: string): Promise<pg.Pool> {
  const { pool } = await postgresSchema(t, `${label}_${++namespaces}`, { max: 4 })
  await pool.query(sql)
  return pool
}
