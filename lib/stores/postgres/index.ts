/** PostgreSQL-backed stores (`fastify-password-auth/postgres`); needs the optional peer dependency pg. */

export { accountsTableSql, accountsTriggerSql } from './accounts-ddl.js'
export type {
  SqlAccountColumns as PostgresAccountColumns, SqlAccountFieldColumns as PostgresAccountFieldColumns, SqlAccountMapping as PostgresAccountMapping,
  SqlIdType as PostgresIdType
} from '../sql/account-options.js'
export { PostgresAccountStore, type NewPostgresAccount, type PostgresAccountStoreOptions } from './accounts.js'
export { activityTableSql, PostgresActivityStore, type PostgresActivityStoreOptions } from './activity.js'
export { attemptsTableSql, PostgresAttemptStore, type PostgresAttemptStoreOptions } from './attempts.js'
export { mfaTableSql, PostgresMfaStore, type PostgresMfaStoreOptions } from './mfa.js'
export { oneTimeTokensTableSql, PostgresOneTimeTokenStore, type PostgresOneTimeTokenStoreOptions } from './one-time-tokens.js'
export { PostgresSessionStore, sessionsTableSql, type PostgresSessionStoreOptions } from './sessions.js'
export { passkeysTableSql, PostgresPasskeyStore, type PostgresPasskeyStoreOptions } from './passkeys.js'
export { createPostgresSchema } from './schema.js'
export type { Queryable } from './sql.js'
export { PostgresTrustedDeviceStore, trustedDevicesTableSql, type PostgresTrustedDeviceStoreOptions } from './trusted-devices.js'
