/**
 * SQLite-backed stores (`fastify-password-auth/sqlite`); needs the optional peer dependency better-sqlite3. For ONE
 * server process: the data survives restarts, but nothing is shared with other machines (see example/docs/sqlite.md).
 */
import { schemaScript, type SqlTables, type TableDdl } from '../sql/tables.js'
import { accountsTableSqlite } from './accounts.js'
import { activityTableSqlite } from './activity.js'
import { attemptsTableSqlite } from './attempts.js'
import { mfaTableSqlite } from './mfa.js'
import { oneTimeTokensTableSqlite } from './one-time-tokens.js'
import { passkeysTableSqlite } from './passkeys.js'
import { sessionsTableSqlite } from './sessions.js'
import type { SqliteDatabase } from './sql.js'
import { trustedDevicesTableSqlite } from './trusted-devices.js'

export { accountsTableSqlite, SqliteAccountStore, type NewSqliteAccount, type SqliteAccountStoreOptions } from './accounts.js'
export { activityTableSqlite, SqliteActivityStore, type SqliteActivityStoreOptions } from './activity.js'
export { attemptsTableSqlite, SqliteAttemptStore, type SqliteAttemptStoreOptions } from './attempts.js'
export { mfaTableSqlite, SqliteMfaStore, type SqliteMfaStoreOptions } from './mfa.js'
export { oneTimeTokensTableSqlite, SqliteOneTimeTokenStore, type SqliteOneTimeTokenStoreOptions } from './one-time-tokens.js'
export { passkeysTableSqlite, SqlitePasskeyStore, type SqlitePasskeyStoreOptions } from './passkeys.js'
export { sessionsTableSqlite, SqliteSessionStore, type SqliteSessionStoreOptions } from './sessions.js'
export type { SqliteDatabase, SqliteStatement } from './sql.js'
export { SqliteTrustedDeviceStore, trustedDevicesTableSqlite, type SqliteTrustedDeviceStoreOptions } from './trusted-devices.js'

export type SqliteTables = SqlTables

const DDL: TableDdl = {
  accountsTable: accountsTableSqlite,
  sessionsTable: sessionsTableSqlite,
  attemptsTable: attemptsTableSqlite,
  oneTimeTokensTable: oneTimeTokensTableSqlite,
  mfaTable: mfaTableSqlite,
  activityTable: activityTableSqlite,
  passkeysTable: passkeysTableSqlite,
  trustedDevicesTable: trustedDevicesTableSqlite
}

/** Every table's DDL, in one script (what createSqliteSchema runs). */
export function sqliteSchemaSql (tables: SqliteTables = {}): string {
  return schemaScript(DDL, tables)
}

/**
 * Readies a database for the stores: WAL (readers never wait for the writer, and a crash loses no committed write),
 * a busy timeout (a write that finds the file locked by another connection waits up to `busyTimeoutMs` instead of
 * failing at once), `synchronous = NORMAL` (durable in WAL mode across a process crash; the last commits can be lost
 * only to a power cut), then the tables, indexes and trigger if they do not exist yet, in one transaction. Call it
 * before making the stores (they prepare their statements when made). The pragmas hold for this connection: a second
 * connection (a script on the same file) needs its own `busy_timeout`.
 */
export function createSqliteSchema (database: SqliteDatabase, { busyTimeoutMs = 5000, ...tables }: SqliteTables & { busyTimeoutMs?: number } = {}): void {
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) throw new TypeError('createSqliteSchema: busyTimeoutMs must be a whole number of milliseconds')
  database.pragma(`busy_timeout = ${busyTimeoutMs}`)
  const mode = database.pragma('journal_mode = WAL', { simple: true })
  // An in-memory database has no WAL ('memory'): fine for tests, and it is one connection's anyway.
  if (mode !== 'wal' && mode !== 'memory') throw new Error(`createSqliteSchema: the database refused WAL mode (journal_mode is ${String(mode)})`)
  database.pragma('synchronous = NORMAL')
  database.transaction(() => { database.exec(sqliteSchemaSql(tables)) }).immediate()
}
