import type { SqlAccountMapping } from '../sql/account-options.js'
import { resolveAccountMapping } from './account-mapping.js'
import { baseName, quoteIdentifier, quoteName, siblingName } from './sql.js'

const BODY_TAG = '$trigger$'

/**
 * A trigger that advances the credential version when the boolean active column turns false, unless the
 * same statement already advanced it (as `setActive` does). So an account deactivated by any SQL loses
 * its sessions for good: reactivating it does not bring old tokens back. Needs PostgreSQL 14 or later.
 */
export function accountsTriggerSql (mapping: SqlAccountMapping = {}): string {
  const { table, tableName, activeColumn: active, credentialVersion: version } = resolveAccountMapping(mapping)
  if (active === undefined) {
    throw new TypeError('accountsTriggerSql: with an "activeCondition" there is no column a trigger could watch; ' +
      'advance the credential version in the statement that deactivates an account (see the README)')
  }
  const fn = siblingName(tableName, 'on_deactivate')
  const body = `
BEGIN
  IF OLD.${active} IS TRUE AND NEW.${active} IS NOT TRUE AND NEW.${version} = OLD.${version} THEN
    NEW.${version} := OLD.${version} + 1;
  END IF;
  RETURN NEW;
END
`
  if (body.includes(BODY_TAG)) throw new TypeError(`accountsTriggerSql: a column name contains ${BODY_TAG}`)
  return `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS ${BODY_TAG}${body}${BODY_TAG};
CREATE OR REPLACE TRIGGER ${quoteIdentifier(`${baseName(tableName)}_on_deactivate`)} BEFORE UPDATE OF ${active} ON ${table}
  FOR EACH ROW EXECUTE FUNCTION ${fn}();`
}

/** The DDL of the plugin's own accounts table: e-mails unique case-insensitively, a credential version per account. */
export function accountsTableSql (table = 'auth_accounts'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL,
  password_hash text NOT NULL,
  active boolean NOT NULL DEFAULT true,
  credential_version integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_email_key`)} ON ${name} (lower(email));
${accountsTriggerSql({ table })}`
}
