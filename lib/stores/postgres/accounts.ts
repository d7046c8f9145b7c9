import { normalizeEmail } from '../email.js'
import type { AccountStore, EmailUpdate, NewAccountRecord, PasswordAuthAccount, PasswordHashUpdate, StoredAccount } from '../types.js'
import { accountColumns, checkNewAccount } from '../sql/account-columns.js'
import type { AccountMapping } from '../sql/account-mapping.js'
import type { NewSqlAccount, SqlAccountOptions } from '../sql/account-options.js'
import { isIdOfType, resolveAccountMapping } from './account-mapping.js'
import { prepare, quoteIdentifier, type PostgresConnection, type Queryable, type Statement } from './sql.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export type PostgresAccountStoreOptions = SqlAccountOptions & PostgresConnection

export type NewPostgresAccount = NewSqlAccount

type Purpose = 'byEmail' | 'byId' | 'update' | 'insert' | 'insertWithId' | 'updateEmail' | 'delete'

function returnedAccount (m: AccountMapping): string {
  const account = [
    `${m.id}::text AS "id"`,
    `lower(${m.email}) AS "email"`,
    `COALESCE(${m.active}, false) AS "active"`,
    `${m.credentialVersion} AS "credentialVersion"`,
    ...m.fields.map(([column, field]) => `${column} AS ${quoteIdentifier(field)}`)
  ].join(', ')
  return account
}

function statements (m: AccountMapping): Record<Purpose, string> & { setActive?: string } {
  const account = returnedAccount(m)
  const withHash = `${account}, ${m.passwordHash} AS "passwordHash"`
  const id = `${m.id} = $1::${m.idType}`
  const inserted = [m.email, m.passwordHash, ...(m.activeColumn === undefined ? [] : [m.activeColumn])]
  const placeholders = (first: number): string[] => inserted.map((_, i) => `$${i + first}`)
  const sql: Record<Purpose, string> & { setActive?: string } = {
    // `<> ''` lets a partial unique index (`WHERE email <> ''`, for tables with blank e-mails) serve the lookup.
    byEmail: `SELECT ${withHash} FROM ${m.table} WHERE lower(${m.email}) = $1 AND ${m.email} <> ''`,
    byId: `SELECT ${account} FROM ${m.table} WHERE ${id}`,
    update: `UPDATE ${m.table} SET ${m.passwordHash} = $3, ${m.credentialVersion} = ${m.credentialVersion} + $4 WHERE ${id} AND ${m.passwordHash} = $2`,
    insert: `INSERT INTO ${m.table} (${inserted.join(', ')}) VALUES (${placeholders(1).join(', ')}) ON CONFLICT DO NOTHING RETURNING ${withHash}`,
    insertWithId: `INSERT INTO ${m.table} (${[m.id, ...inserted].join(', ')}) VALUES (${[`$1::${m.idType}`, ...placeholders(2)].join(', ')}) ` +
      `ON CONFLICT DO NOTHING RETURNING ${withHash}`,
    // A compare-and-set on the address and the credential version; the NOT EXISTS covers tables without a unique
    // index on lower(email), the index (a unique violation, caught) the race between two accounts.
    updateEmail: `UPDATE ${m.table} SET ${m.email} = $4 WHERE ${id} AND lower(${m.email}) = $2 AND ${m.credentialVersion} = $3 ` +
      `AND NOT EXISTS (SELECT 1 FROM ${m.table} WHERE lower(${m.email}) = $4 AND ${m.email} <> '' AND NOT (${id}))`,
    delete: `DELETE FROM ${m.table} WHERE ${id}`
  }
  if (m.activeColumn !== undefined) {
    // Deactivation advances the credential version, so reactivating does not revive old tokens.
    sql.setActive = `UPDATE ${m.table} SET ${m.activeColumn} = $2::boolean, ${m.credentialVersion} = ${m.credentialVersion} + ` +
      `CASE WHEN ${m.activeColumn} IS TRUE AND NOT $2::boolean THEN 1 ELSE 0 END WHERE ${id}`
  }
  return sql
}

/** The mapping's own values are checked by resolveAccountMapping, with their column names. */
const OPTIONS: StoreOptionRules = { pool: 'pool', preparedStatements: 'boolean', fields: 'any', createColumns: 'function', table: 'any', columns: 'any', idType: 'any', activeCondition: 'any' }

/**
 * Accounts in PostgreSQL: the plugin's own table (`accountsTableSql`) or one your application already
 * has, mapped by `table`, `columns`, `idType`, `activeCondition` and `fields`. Every method is one
 * statement; the password update is a compare-and-set on the old hash, so of concurrent changes exactly
 * one wins. E-mails are looked up as lower(email), which a unique index on lower(email) serves, and
 * returned lower-cased (`request.account.email` is `ada@example.com` for a row holding `Ada@Example.com`).
 */
export class PostgresAccountStore implements AccountStore {
  readonly #pool: Queryable
  readonly #mapping: AccountMapping
  readonly #sql: Record<Purpose, Statement>
  /** Only with a boolean active column. */
  readonly #setActive: Statement | undefined
  readonly #createColumns: PostgresAccountStoreOptions['createColumns']

  constructor (options: PostgresAccountStoreOptions) {
    checkStoreOptions('PostgresAccountStore', options, OPTIONS)
    const { pool, fields, createColumns, preparedStatements = true, ...mapping } = options
    this.#createColumns = createColumns
    this.#pool = pool
    this.#mapping = resolveAccountMapping(mapping, fields)
    const { setActive, ...sql } = statements(this.#mapping)
    this.#sql = prepare(sql, preparedStatements)
    this.#setActive = setActive === undefined ? undefined : prepare({ setActive }, preparedStatements).setActive
  }

  async findByEmail (email: string): Promise<StoredAccount | null> {
    const { rows } = await this.#pool.query({ ...this.#sql.byEmail, values: [email] })
    if (rows.length > 1) {
      throw new Error('PostgresAccountStore: several accounts have this e-mail address in different cases; make lower(email) unique (see the README)')
    }
    return rows[0] ?? null
  }

  async findById (id: string): Promise<PasswordAuthAccount | null> {
    if (!isIdOfType(id, this.#mapping.idType)) return null
    // Every authenticated request: no spread, which with a property after it is V8's slow path on Node 20.
    const { name, text } = this.#sql.byId
    const { rows } = await this.#pool.query({ name, text, values: [id] })
    return rows[0] ?? null
  }

  async updatePasswordHash ({ id, expectedHash, newHash, advanceCredentialVersion }: PasswordHashUpdate): Promise<boolean> {
    if (!isIdOfType(id, this.#mapping.idType)) return false
    const { rowCount } = await this.#pool.query({ ...this.#sql.update, values: [id, expectedHash, newHash, advanceCredentialVersion ? 1 : 0] })
    return rowCount === 1
  }

  /**
   * Creates an account (the e-mail is stored trimmed and lower-cased); other columns of yours take their
   * defaults. If the e-mail or id is taken it throws, or with `{ ifAbsent: true }` resolves null, which
   * makes loading a seed file idempotent.
   */
  async add (account: NewPostgresAccount, { ifAbsent = false } = {}): Promise<StoredAccount | null> {
    checkNewAccount('PostgresAccountStore', this.#mapping, account, isIdOfType)
    const email = normalizeEmail(account.email)
    const values: unknown[] = [email, account.passwordHash, ...(this.#mapping.activeColumn === undefined ? [] : [account.active ?? true])]
    const { rows } = await this.#pool.query(account.id === undefined
      ? { ...this.#sql.insert, values }
      : { ...this.#sql.insertWithId, values: [account.id, ...values] })
    if (rows[0] !== undefined) return rows[0]
    if (ifAbsent) return null
    throw new Error(`An account with e-mail ${email} or id ${account.id ?? '(new)'} already exists`)
  }

  /**
   * A verified registration's account, active, with the registration's fields in the columns `fields`
   * maps them to and `createColumns`' values (a registration field that `fields` does not map is stored
   * only if `createColumns` writes it); null if the e-mail is taken (the unique index on lower(email)
   * settles concurrent creations: exactly one wins).
   */
  async create (account: NewAccountRecord): Promise<StoredAccount | null> {
    const m = this.#mapping
    const columns = accountColumns(m, account, true, this.#createColumns)
    const { rows } = await this.#pool.query({
      text: `INSERT INTO ${m.table} (${columns.map(([column]) => column).join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) ` +
        `ON CONFLICT DO NOTHING RETURNING ${returnedAccount(m)}, ${m.passwordHash} AS "passwordHash"`,
      values: columns.map(([, value]) => value)
    })
    return rows[0] ?? null
  }

  /**
   * Activates or deactivates an account (needs a boolean active column). Deactivation advances the
   * credential version: the account's tokens stop working at the next request and stay dead after a
   * reactivation.
   */
  async setActive (id: string, active: boolean): Promise<boolean> {
    const statement = this.#setActive
    if (statement === undefined) {
      throw new TypeError('PostgresAccountStore: setActive() needs a boolean active column; with an "activeCondition", ' +
        'change your own columns and advance the credential version in the same statement')
    }
    if (!isIdOfType(id, this.#mapping.idType)) return false
    const { rowCount } = await this.#pool.query({ ...statement, values: [id, active] })
    return rowCount === 1
  }

  async updateEmail ({ id, expectedEmail, expectedCredentialVersion, newEmail }: EmailUpdate): Promise<boolean> {
    if (!isIdOfType(id, this.#mapping.idType)) return false
    try {
      const { rowCount } = await this.#pool.query({ ...this.#sql.updateEmail, values: [id, expectedEmail, expectedCredentialVersion, normalizeEmail(newEmail)] })
      return rowCount === 1
    } catch (err) {
      // unique_violation: another account took the address between the check and the write.
      if ((err as { code?: string }).code === '23505') return false
      throw err
    }
  }

  /** Removes the row. Rows of yours that reference it (foreign keys) must cascade, or the delete fails (a 503). */
  async delete (id: string): Promise<boolean> {
    if (!isIdOfType(id, this.#mapping.idType)) return false
    const { rowCount } = await this.#pool.query({ ...this.#sql.delete, values: [id] })
    return rowCount === 1
  }
}
