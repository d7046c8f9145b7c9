/** The shared PostgreSQL, used only in a schema of this run's own. */
import pg from 'pg'

/** A client if the server answers, or undefined. */
export async function connectPostgres (url: string): Promise<pg.Client | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return client
  } catch {
    await client.end().catch(() => {})
    return undefined
  }
}

/** Drops the run's schema, if the server under test could not (it drops it when it closes). */
export async function dropSchema (client: pg.Client, schema: string): Promise<void> {
  await client.query(`DROP SCHEMA IF EXISTS "${schema.replaceAll('"', '""')}" CASCADE`)
}
