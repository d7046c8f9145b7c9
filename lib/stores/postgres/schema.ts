import { schemaScript, type SqlTables } from '../sql/tables.js'
import { accountsTableSql } from './accounts-ddl.js'
import { activityTableSql } from './activity.js'
import { attemptsTableSql } from './attempts.js'
import { mfaTableSql } from './mfa.js'
import { oneTimeTokensTableSql } from './one-time-tokens.js'
import { passkeysTableSql } from './passkeys.js'
import { sessionsTableSql } from './sessions.js'
import type { Queryable } from './sql.js'
import { trustedDevicesTableSql } from './trusted-devices.js'

/** Every table's DDL, in one script. */
export function postgresSchemaSql (tables: SqlTables = {}): string {
  return schemaScript({
    accountsTable: accountsTableSql,
    sessionsTable: sessionsTableSql,
    attemptsTable: attemptsTableSql,
    oneTimeTokensTable: oneTimeTokensTableSql,
    mfaTable: mfaTableSql,
    activityTable: activityTableSql,
    passkeysTable: passkeysTableSql,
    trustedDevicesTable: trustedDevicesTableSql
  }, tables)
}

/**
 * Creates the plugin's tables, indexes and trigger if they do not exist yet. Idempotent, and safe when
 * several instances start at once: the statements run as one implicit transaction (one simple query)
 * under an advisory lock, since concurrent CREATE TABLE IF NOT EXISTS can otherwise fail on PostgreSQL's catalog.
 */
export async function createPostgresSchema (pool: Queryable, tables: SqlTables = {}): Promise<void> {
  await pool.query({ text: `SELECT pg_advisory_xact_lock(hashtext('fastify-password-auth schema'));\n${postgresSchemaSql(tables)}` })
}
