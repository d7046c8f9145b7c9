import { randomUUID } from 'node:crypto'
import { normalizeEmail } from '../email.js'
import { markProcessLocal } from '../process-local.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { AccountStore, EmailUpdate, NewAccountRecord, PasswordAuthAccount, PasswordHashUpdate, StoredAccount } from '../types.js'
import { bit, one, prepareAll, quoteName, type Prepared, type SqliteDatabase } from './sql.js'

export interface SqliteAccountStoreOptions {
  /** Your `better-sqlite3` Database; the store never opens or closes it. */
  database: SqliteDatabase
  /** Table name (default 'auth_accounts'). */
  table?: string
}

export interface NewSqliteAccount {
  email: string
  passwordHash: string
  id?: string
  active?: boolean
  /** Values of your own account fields (PasswordAuthAccount by declaration merging), kept as JSON. */
  fields?: Record<string, unknown>
}

/**
 * The DDL of the accounts table: ids are random UUIDs as text, e-mails stored normalised and unique, the
 * registration's fields as JSON. A trigger advances the credential version when `active` turns 0 by any SQL.
 */
export function accountsTableSqlite (table = 'auth_accounts'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1,
  credential_version INTEGER NOT NULL DEFAULT 0,
  fields TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
) STRICT;
CREATE TRIGGER IF NOT EXISTS ${quoteName(`${table}_on_deactivate`)} AFTER UPDATE OF active ON ${name}
  FOR EACH ROW WHEN OLD.active = 1 AND NEW.active = 0 AND NEW.credential_version = OLD.credential_version
  BEGIN UPDATE ${name} SET credential_version = credential_version + 1 WHERE id = NEW.id; END;`
}

const ACCOUNT = 'id, email, active, credential_version AS credentialVersion, fields'

function accountOf (row: Record<string, any> | undefined): (StoredAccount & PasswordAuthAccount) | null {
  if (row === undefined) return null
  const { fields, active, passwordHash, ...core } = row
  return { ...JSON.parse(fields), ...core, active: active === 1, ...(passwordHash === undefined ? {} : { passwordHash }) }
}

function accountStatements (name: string) {
  return {
    byEmail: `SELECT ${ACCOUNT}, password_hash AS passwordHash FROM ${name} WHERE email = @email`,
    byId: `SELECT ${ACCOUNT} FROM ${name} WHERE id = @id`,
    update: `UPDATE ${name} SET password_hash = @newHash, credential_version = credential_version + @advance WHERE id = @id AND password_hash = @expectedHash`,
    insert: `INSERT INTO ${name} (id, email, password_hash, active, fields, created_at) VALUES (@id, @email, @passwordHash, @active, @fields, @now)
      ON CONFLICT DO NOTHING RETURNING ${ACCOUNT}, password_hash AS passwordHash`,
    updateEmail: `UPDATE ${name} SET email = @newEmail WHERE id = @id AND email = @expectedEmail AND credential_version = @expectedCredentialVersion
      AND NOT EXISTS (SELECT 1 FROM ${name} WHERE email = @newEmail)`,
    setActive: `UPDATE ${name} SET active = @active, credential_version = credential_version + (active = 1 AND @active = 0) WHERE id = @id`,
    delete: `DELETE FROM ${name} WHERE id = @id`
  }
}

const OPTIONS: StoreOptionRules = { database: 'database', table: 'name' }

/**
 * Accounts in SQLite, in the plugin's own table (`accountsTableSqlite`). Every method is one statement: the
 * password update a compare-and-set on the old hash, the e-mail change one on the address and credential version,
 * and a creation an INSERT that the unique e-mail settles (of concurrent creations exactly one wins).
 */
export class SqliteAccountStore implements AccountStore {
  readonly #sql: Prepared<typeof accountStatements>

  constructor (options: SqliteAccountStoreOptions) {
    checkStoreOptions('SqliteAccountStore', options, OPTIONS)
    markProcessLocal(this)
    const { database, table = 'auth_accounts' } = options
    const name = quoteName(table)
    this.#sql = prepareAll('SqliteAccountStore', database, accountStatements(name))
  }

  async findByEmail (email: string): Promise<StoredAccount | null> {
    return accountOf(one(this.#sql.byEmail, { email }))
  }

  async findById (id: string): Promise<PasswordAuthAccount | null> {
    return accountOf(one(this.#sql.byId, { id }))
  }

  async updatePasswordHash ({ id, expectedHash, newHash, advanceCredentialVersion }: PasswordHashUpdate): Promise<boolean> {
    return this.#sql.update.run({ id, expectedHash, newHash, advance: bit(advanceCredentialVersion) }).changes === 1
  }

  /**
   * Creates an account (the e-mail stored normalised, the id a random UUID unless given). If the e-mail or id is
   * taken it throws, or with `{ ifAbsent: true }` resolves null, which makes loading a seed file idempotent.
   */
  async add (account: NewSqliteAccount, { ifAbsent = false } = {}): Promise<StoredAccount | null> {
    const email = normalizeEmail(account.email)
    const created = this.#insert(account.id ?? randomUUID(), email, account.passwordHash, account.active ?? true, account.fields ?? {})
    if (created !== null || ifAbsent) return created
    throw new Error(`An account with e-mail ${email} or id ${account.id ?? '(new)'} already exists`)
  }

  /** A verified registration's account, active, its fields kept as JSON; null if the e-mail is taken. */
  async create (account: NewAccountRecord): Promise<StoredAccount | null> {
    return this.#insert(randomUUID(), normalizeEmail(account.email), account.passwordHash, true, account.fields)
  }

  /** Activates or deactivates an account; deactivation advances the credential version (old tokens stay dead). */
  async setActive (id: string, active: boolean): Promise<boolean> {
    return this.#sql.setActive.run({ id, active: bit(active) }).changes === 1
  }

  async updateEmail ({ id, expectedEmail, expectedCredentialVersion, newEmail }: EmailUpdate): Promise<boolean> {
    return this.#sql.updateEmail.run({ id, expectedEmail, expectedCredentialVersion, newEmail: normalizeEmail(newEmail) }).changes === 1
  }

  async delete (id: string): Promise<boolean> {
    return this.#sql.delete.run({ id }).changes === 1
  }

  #insert (id: string, email: string, passwordHash: string, active: boolean, fields: Record<string, unknown>): StoredAccount | null {
    return accountOf(one(this.#sql.insert, { id, email, passwordHash, active: bit(active), fields: JSON.stringify(fields), now: Date.now() }))
  }
}
