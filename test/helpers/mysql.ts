import mysql from 'mysql2/promise'
import type { Teardown } from './teardown.js'

export const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'

/**
 * Whether MySQL or MariaDB answers at MYSQL_URL. In CI a missing server is an error (these tests must never be
 * skipped there); elsewhere the tests skip with this reason.
 */
async function probe (): Promise<string | false> {
  try {
    const connection = await mysql.createConnection({ uri: MYSQL_URL, connectTimeout: 1000 })
    try { await connection.query('SELECT 1') } finally { await connection.end().catch(() => {}) }
    return false
  } catch (err) {
    const reason = `MySQL at ${MYSQL_URL} is not reachable (${(err as Error).message}); start it to run these tests`
    if (process.env.CI !== undefined) throw new Error(`CI: ${reason}`)
    return reason
  }
}

export const mysqlUnavailable = await probe()

/** MYSQL_URL with another database in its path. */
export function mysqlUrl (database: string): string {
  const url = new URL(MYSQL_URL)
  url.pathname = `/${database}`
  return url.href
}

/** Runs one statement on a connection of its own (CREATE / DROP DATABASE). */
async function admin (sql: string): Promise<void> {
  const connection = await mysql.createConnection(MYSQL_URL)
  try { await connection.query(sql) } finally { await connection.end() }
}

/**
 * A database of the test's own, dropped in teardown, with a pool on it, so unqualified table names (the stores'
 * defaults) land there. `url` points child processes (the example server) at it.
 */
export async function mysqlDatabase (t: Teardown, label: string, { connectionLimit = 10 }: { connectionLimit?: number } = {}): Promise<{ pool: mysql.Pool, database: string, url: string }> {
  const database = `test_${label}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
  await admin(`CREATE DATABASE \`${database}\``)
  const url = mysqlUrl(database)
  const pool = mysql.createPool({ uri: url, connectionLimit })
  t.teardown(async () => {
    await pool.end()
    await admin(`DROP DATABASE IF EXISTS \`${database}\``)
  })
  return { pool, database, url }
}
