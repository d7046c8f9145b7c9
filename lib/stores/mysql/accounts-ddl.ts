import type { SqlAccountMapping } from '../sql/account-options.js'
import { resolveAccountMapping } from './account-mapping.js'
import { quoteName, TABLE_OPTIONS } from './sql.js'

/**
 * A trigger that advances the credential version when the boolean active column turns false, unless the same
 * statement already advanced it (as `setActive` does). So an account deactivated by any SQL loses its sessions for
 * good: reactivating it does not bring old tokens back. `CREATE TRIGGER IF NOT EXISTS` needs MariaDB 10.1.4 or
 * MySQL 8.0.29; with binary logging on, creating a trigger needs the TRIGGER privilege and SUPER (or
 * `log_bin_trust_function_creators`).
 */
export function accountsTriggerMysql (mapping: SqlAccountMapping = {}): string {
  const { table, tableName, activeColumn: active, credentialVersion: version } = resolveAccountMapping(mapping)
  if (active === undefined) {
    throw new TypeError('accountsTriggerMysql: with an "activeCondition" there is no column a trigger could watch; ' +
      'advance the credential version in the statement that deactivates an account (see example/docs/mysql.md)')
  }
  const dot = tableName.lastIndexOf('.')
  const trigger = quoteName(`${tableName.slice(0, dot + 1)}${tableName.slice(dot + 1)}_on_deactivate`)
  return `CREATE TRIGGER IF NOT EXISTS ${trigger} BEFORE UPDATE ON ${table} FOR EACH ROW
  SET NEW.${version} = IF(OLD.${active} <> 0 AND NOT (NEW.${active} <> 0) AND NEW.${version} = OLD.${version}, OLD.${version} + 1, NEW.${version});`
}

/**
 * The DDL of the plugin's own accounts table: ids are random UUIDs (CHAR(36)), e-mails stored normalised and unique
 * (binary collation: compared exactly), a credential version per account, and the deactivation trigger.
 */
export function accountsTableMysql (table = 'auth_accounts'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  id CHAR(36) NOT NULL PRIMARY KEY,
  email VARCHAR(320) NOT NULL,
  password_hash VARCHAR(255) NOT NULL,
  active TINYINT(1) NOT NULL DEFAULT 1,
  credential_version INT NOT NULL DEFAULT 0,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  UNIQUE KEY \`email_key\` (email)
) ${TABLE_OPTIONS};
${accountsTriggerMysql({ table })}`
}
