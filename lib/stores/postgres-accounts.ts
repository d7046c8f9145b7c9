import type { AccountStore, PasswordHashUpdate, StoredAccount } from './types.js'
import { baseName, prepare, quoteName, type Queryable, type Statement } from './postgres-sql.js'

export interface PostgresAccountStoreOptions {
  /** Your `pg` Pool; the store never connects or ends it. */
  pool: Queryable
  /** Table name, optionally schema-qualified (default 'auth_accounts'). */
  table?: string
}

export interface NewPostgresAccount {
  email: string
  passwordHash: string
  id?: string
  active?: boolean
}

/** The DDL of the accounts table: e-mails unique case-insensitively, a credential version per account. */
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
CREATE UNIQUE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_email_key`)} ON ${name} (lower(email));`
}

const COLUMNS = 'id::text AS id, email, password_hash AS "passwordHash", active, credential_version AS "credentialVersion"'
const INVALID_TEXT_REPRESENTATION = '22P02'

/**
 * Accounts in PostgreSQL. Every method is one statement; the password update is a compare-and-set on
 * the old hash, so of concurrent changes exactly one wins. E-mails are looked up through the unique
 * index on lower(email).
 */
export class PostgresAccountStore implements AccountStore {
  readonly #pool: Queryable
  readonly #sql: Record<'byEmail' | 'byId' | 'update' | 'insert' | 'setActive', Statement>

  constructor ({ pool, table = 'auth_accounts' }: PostgresAccountStoreOptions) {
    const name = quoteName(table)
    this.#pool = pool
    this.#sql = prepare({
      byEmail: `SELECT ${COLUMNS} FROM ${name} WHERE lower(email) = $1`,
      byId: `SELECT ${COLUMNS} FROM ${name} WHERE id = $1`,
      update: `UPDATE ${name} SET password_hash = $3, credential_version = credential_version + $4 WHERE id = $1 AND password_hash = $2`,
      insert: `INSERT INTO ${name} (id, email, password_hash, active) VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
      setActive: `UPDATE ${name} SET active = $2 WHERE id = $1`
    })
  }

  async findByEmail (email: string): Promise<StoredAccount | null> {
    const { rows } = await this.#pool.query({ ...this.#sql.byEmail, values: [email] })
    return rows[0] ?? null
  }

  async findById (id: string): Promise<StoredAccount | null> {
    try {
      const { rows } = await this.#pool.query({ ...this.#sql.byId, values: [id] })
      return rows[0] ?? null
    } catch (err) {
      // An id that is not a uuid names no account.
      if ((err as { code?: string }).code === INVALID_TEXT_REPRESENTATION) return null
      throw err
    }
  }

  async updatePasswordHash ({ id, expectedHash, newHash, advanceCredentialVersion }: PasswordHashUpdate): Promise<boolean> {
    try {
      const { rowCount } = await this.#pool.query({ ...this.#sql.update, values: [id, expectedHash, newHash, advanceCredentialVersion ? 1 : 0] })
      return rowCount === 1
    } catch (err) {
      if ((err as { code?: string }).code === INVALID_TEXT_REPRESENTATION) return false
      throw err
    }
  }

  /**
   * Creates an account (the e-mail is stored trimmed and lower-cased). If the e-mail or id is taken it
   * throws, or with `{ ifAbsent: true }` resolves null, which makes loading a seed file idempotent.
   */
  async add (account: NewPostgresAccount, { ifAbsent = false } = {}): Promise<StoredAccount | null> {
    const email = account.email.trim().toLowerCase()
    const { rows } = await this.#pool.query({
      ...this.#sql.insert, values: [account.id ?? null, email, account.passwordHash, account.active ?? true]
    })
    if (rows[0] !== undefined) return rows[0]
    if (ifAbsent) return null
    throw new Error(`An account with e-mail ${email} or id ${account.id ?? '(new)'} already exists`)
  }

  /** Activates or deactivates an account; its tokens stop working at the next request. */
  async setActive (id: string, active: boolean): Promise<boolean> {
    const { rowCount } = await this.#pool.query({ ...this.#sql.setActive, values: [id, active] })
    return rowCount === 1
  }
}
