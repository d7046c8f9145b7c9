/** PostgreSQL-backed stores (`fastify-password-auth/postgres`); needs the optional peer dependency pg. */
import { accountsTableSql } from './accounts-ddl.js'
import { activityTableSql } from './activity.js'
import { attemptsTableSql } from './attempts.js'
import { mfaTableSql } from './mfa.js'
import { oneTimeTokensTableSql } from './one-time-tokens.js'
import { passkeysTableSql } from './passkeys.js'
import { sessionsTableSql } from './sessions.js'
import type { Queryable } from './sql.js'
import { trustedDevicesTableSql } from './trusted-devices.js'

export { accountsTableSql, accountsTriggerSql } from './accounts-ddl.js'
export type {
  PostgresAccountColumns, PostgresAccountFieldColumns, PostgresAccountMapping, PostgresIdType
} from './account-mapping.js'
export { PostgresAccountStore, type NewPostgresAccount, type PostgresAccountStoreOptions } from './accounts.js'
export { activityTableSql, PostgresActivityStore, type PostgresActivityStoreOptions } from './activity.js'
export { attemptsTableSql, PostgresAttemptStore, type PostgresAttemptStoreOptions } from './attempts.js'
export { mfaTableSql, PostgresMfaStore, type PostgresMfaStoreOptions } from './mfa.js'
export { oneTimeTokensTableSql, PostgresOneTimeTokenStore, type PostgresOneTimeTokenStoreOptions } from './one-time-tokens.js'
export { PostgresSessionStore, sessionsTableSql, type PostgresSessionStoreOptions } from './sessions.js'
export { passkeysTableSql, PostgresPasskeyStore, type PostgresPasskeyStoreOptions } from './passkeys.js'
export type { Queryable } from './sql.js'
export { PostgresTrustedDeviceStore, trustedDevicesTableSql, type PostgresTrustedDeviceStoreOptions } from './trusted-devices.js'

/**
 * Creates the plugin's tables, indexes and trigger if they do not exist yet. Idempotent, and safe when
 * several instances start at once: the statements run as one implicit transaction (one simple query)
 * under an advisory lock, since concurrent CREATE TABLE IF NOT EXISTS can otherwise fail on PostgreSQL's catalog.
 */
export async function createPostgresSchema (
  pool: Queryable,
  { accountsTable, sessionsTable, attemptsTable, oneTimeTokensTable, mfaTable, activityTable, passkeysTable, trustedDevicesTable }: {
    accountsTable?: string, sessionsTable?: string, attemptsTable?: string, oneTimeTokensTable?: string, mfaTable?: string, activityTable?: string, passkeysTable?: string, trustedDevicesTable?: string
  } = {}
): Promise<void> {
  await pool.query({
    text: `SELECT pg_advisory_xact_lock(hashtext('fastify-password-auth schema'));
${accountsTableSql(accountsTable)}
${sessionsTableSql(sessionsTable)}
${attemptsTableSql(attemptsTable)}
${oneTimeTokensTableSql(oneTimeTokensTable)}
${mfaTableSql(mfaTable)}
${activityTableSql(activityTable)}
${passkeysTableSql(passkeysTable)}
${trustedDevicesTableSql(trustedDevicesTable)}`
  })
}
