/**
 * MySQL- and MariaDB-backed stores (`fastify-password-auth/mysql`); needs the optional peer dependency mysql2 (its
 * promise API: `mysql.createPool(…)` from `mysql2/promise`). InnoDB at the server's default isolation (REPEATABLE
 * READ): every racy change is one statement or a transaction over locked rows (see example/docs/mysql.md).
 */
import { schemaScript, type SqlTables, type TableDdl } from '../sql/tables.js'
import { accountsTableMysql } from './accounts-ddl.js'
import { activityTableMysql } from './activity.js'
import { attemptsTableMysql } from './attempts.js'
import { mfaTableMysql } from './mfa.js'
import { oneTimeTokensTableMysql } from './one-time-tokens.js'
import { passkeysTableMysql } from './passkeys.js'
import { sessionsTableMysql } from './sessions.js'
import { statementsOf, type MysqlPool } from './sql.js'
import { trustedDevicesTableMysql } from './trusted-devices.js'

export type {
  SqlAccountColumns as MysqlAccountColumns, SqlAccountFieldColumns as MysqlAccountFieldColumns, SqlAccountMapping as MysqlAccountMapping,
  SqlIdType as MysqlIdType
} from '../sql/account-options.js'
export { MysqlAccountStore, type MysqlAccountStoreOptions, type NewMysqlAccount } from './accounts.js'
export { accountsTableMysql, accountsTriggerMysql } from './accounts-ddl.js'
export { activityTableMysql, MysqlActivityStore, type MysqlActivityStoreOptions } from './activity.js'
export { attemptsTableMysql, MysqlAttemptStore, type MysqlAttemptStoreOptions } from './attempts.js'
export { mfaTableMysql, MysqlMfaStore, type MysqlMfaStoreOptions } from './mfa.js'
export { MysqlOneTimeTokenStore, oneTimeTokensTableMysql, type MysqlOneTimeTokenStoreOptions } from './one-time-tokens.js'
export { MysqlPasskeyStore, passkeysTableMysql, type MysqlPasskeyStoreOptions } from './passkeys.js'
export { MysqlSessionStore, sessionsTableMysql, type MysqlSessionStoreOptions } from './sessions.js'
export type { MysqlConnection, MysqlPool } from './sql.js'
export { MysqlTrustedDeviceStore, trustedDevicesTableMysql, type MysqlTrustedDeviceStoreOptions } from './trusted-devices.js'

export type MysqlTables = SqlTables

const DDL: TableDdl = {
  accountsTable: accountsTableMysql,
  sessionsTable: sessionsTableMysql,
  attemptsTable: attemptsTableMysql,
  oneTimeTokensTable: oneTimeTokensTableMysql,
  mfaTable: mfaTableMysql,
  activityTable: activityTableMysql,
  passkeysTable: passkeysTableMysql,
  trustedDevicesTable: trustedDevicesTableMysql
}

/** Every table's DDL, in one script (what createMysqlSchema runs, statement by statement). */
export function mysqlSchemaSql (tables: MysqlTables = {}): string {
  return schemaScript(DDL, tables)
}

/**
 * Creates the plugin's tables and trigger if they do not exist yet, one statement at a time (a pool needs no
 * `multipleStatements`). Idempotent, and safe when several instances start at once (`IF NOT EXISTS` throughout).
 */
export async function createMysqlSchema (pool: MysqlPool, tables: MysqlTables = {}): Promise<void> {
  for (const statement of statementsOf(mysqlSchemaSql(tables))) await pool.query(statement)
}
