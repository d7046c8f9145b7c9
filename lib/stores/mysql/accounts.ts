import { randomUUID } from 'node:crypto'
import { normalizeEmail } from '../email.js'
import { accountColumns, checkNewAccount, type ColumnValue } from '../sql/account-columns.js'
import type { AccountMapping } from '../sql/account-mapping.js'
import type { NewSqlAccount, SqlAccountOptions } from '../sql/account-options.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { AccountStore, EmailUpdate, NewAccountRecord, PasswordAuthAccount, PasswordHashUpdate, StoredAccount } from '../types.js'
import { idPlaceholder, isIdOfType, resolveAccountMapping } from './account-mapping.js'
import { bool, ER_DUP_ENTRY, errno, num, quoteIdentifier, rows, transaction, written, type MysqlPool, type Row, type Written } from './sql.js'

export type MysqlAccountStoreOptions = SqlAccountOptions & {
  /** Your `mysql2/promise` Pool; the store never connects or ends it. */
  pool: MysqlPool
}

export type NewMysqlAccount = NewSqlAccount

function statements (m: AccountMapping) {
  const account = [
    `CAST(${m.id} AS CHAR) AS \`id\``,
    `LOWER(${m.email}) AS \`email\``,
    `COALESCE(${m.active} <> 0, 0) AS \`active\``,
    `${m.credentialVersion} AS \`credentialVersion\``,
    ...m.fields.map(([column, field]) => `${column} AS ${quoteIdentifier(`field:${field}`)}`)
  ].join(', ')
  const withHash = `${account}, ${m.passwordHash} AS \`passwordHash\``
  const id = `${m.id} = ${idPlaceholder(m.idType)}`
  return {
    // `=` with the column's own collation: a `_ci` column (Rails', Laravel's) finds any case through its unique index;
    // the rows are then kept only if their lower-cased address is the one asked for (a `_ci` collation equates more).
    byEmail: `SELECT ${withHash} FROM ${m.table} WHERE ${m.email} = ? AND ${m.email} <> ''`,
    byId: `SELECT ${account} FROM ${m.table} WHERE ${id}`,
    byIdWithHash: `SELECT ${withHash} FROM ${m.table} WHERE ${id}`,
    // The hash compared byte for byte, whatever the column's collation.
    update: `UPDATE ${m.table} SET ${m.passwordHash} = ?, ${m.credentialVersion} = ${m.credentialVersion} + ? WHERE ${id} AND CAST(${m.passwordHash} AS BINARY) = CAST(? AS BINARY)`,
    lockForEmail: `SELECT LOWER(${m.email}) AS \`email\`, ${m.credentialVersion} AS \`credentialVersion\` FROM ${m.table} WHERE ${id} FOR UPDATE`,
    holders: `SELECT CAST(${m.id} AS CHAR) AS \`id\`, LOWER(${m.email}) AS \`email\` FROM ${m.table} WHERE ${m.email} = ? AND ${m.email} <> ''`,
    setEmail: `UPDATE ${m.table} SET ${m.email} = ? WHERE ${id}`,
    // MySQL assigns left to right: the version is advanced from the active value before the change.
    setActive: m.activeColumn === undefined
      ? undefined
      : `UPDATE ${m.table} SET ${m.credentialVersion} = ${m.credentialVersion} + IF(${m.activeColumn} <> 0 AND ? = 0, 1, 0), ${m.activeColumn} = ? WHERE ${id}`,
    delete: `DELETE FROM ${m.table} WHERE ${id}`
  }
}

function accountOf (m: AccountMapping, row: Row | undefined): StoredAccount | null {
  if (row === undefined) return null
  const account: Record<string, unknown> = { id: String(row.id), email: row.email, active: bool(row.active), credentialVersion: num(row.credentialVersion) }
  for (const [, field] of m.fields) account[field] = row[`field:${field}`]
  if (row.passwordHash !== undefined) account.passwordHash = row.passwordHash
  return account as unknown as StoredAccount
}

/** The mapping's own values are checked by resolveAccountMapping, with their column names. */
const OPTIONS: StoreOptionRules = { pool: 'mysql', fields: 'any', createColumns: 'function', table: 'any', columns: 'any', idType: 'any', activeCondition: 'any' }

/**
 * Accounts in MySQL or MariaDB: the plugin's own table (`accountsTableMysql`) or one your application already has
 * (a Rails or Laravel `users` table), mapped by `table`, `columns`, `idType`, `activeCondition` and `fields`. The
 * password update is one UPDATE, a compare-and-set on the old hash (of concurrent changes exactly one wins); an
 * e-mail change locks the account's row; a creation is an INSERT that the unique index on the e-mail settles.
 * E-mails are returned lower-cased. The table needs a unique index on its e-mail column: with a case-insensitive
 * collation (`utf8mb4_unicode_ci`, the Rails and Laravel default) it also finds addresses stored in another case.
 */
export class MysqlAccountStore implements AccountStore {
  readonly #pool: MysqlPool
  readonly #mapping: AccountMapping
  readonly #sql: ReturnType<typeof statements>
  readonly #createColumns: MysqlAccountStoreOptions['createColumns']

  constructor (options: MysqlAccountStoreOptions) {
    checkStoreOptions('MysqlAccountStore', options, OPTIONS)
    const { pool, fields, createColumns, ...mapping } = options
    this.#pool = pool
    this.#createColumns = createColumns
    this.#mapping = resolveAccountMapping(mapping, fields)
    this.#sql = statements(this.#mapping)
  }

  async findByEmail (email: string): Promise<StoredAccount | null> {
    const found = (await rows(this.#pool, this.#sql.byEmail, [email])).filter((row) => row.email === email)
    if (found.length > 1) {
      throw new Error('MysqlAccountStore: several accounts have this e-mail address in different cases; make the e-mail column unique (see example/docs/mysql.md)')
    }
    return accountOf(this.#mapping, found[0])
  }

  async findById (id: string): Promise<PasswordAuthAccount | null> {
    if (!isIdOfType(id, this.#mapping.idType)) return null
    return accountOf(this.#mapping, (await rows(this.#pool, this.#sql.byId, [id]))[0])
  }

  async updatePasswordHash ({ id, expectedHash, newHash, advanceCredentialVersion }: PasswordHashUpdate): Promise<boolean> {
    if (!isIdOfType(id, this.#mapping.idType)) return false
    return await written(this.#pool, this.#sql.update, [newHash, advanceCredentialVersion ? 1 : 0, id, expectedHash]) === 1
  }

  /**
   * Creates an account (the e-mail is stored trimmed and lower-cased); other columns of yours take `createColumns`'
   * values (called with no fields) or their defaults. If the e-mail or id is taken it throws, or with `{ ifAbsent: true }` resolves null, which
   * makes loading a seed file idempotent.
   */
  async add (account: NewMysqlAccount, { ifAbsent = false } = {}): Promise<StoredAccount | null> {
    checkNewAccount('MysqlAccountStore', this.#mapping, account, isIdOfType)
    const email = normalizeEmail(account.email)
    const columns = accountColumns(this.#mapping, { email, passwordHash: account.passwordHash, fields: {} }, (account.active ?? true) ? 1 : 0, this.#createColumns)
    const created = await this.#insert(columns, account.id)
    if (created !== null || ifAbsent) return created
    throw new Error(`An account with e-mail ${email} or id ${account.id ?? '(new)'} already exists`)
  }

  /**
   * A verified registration's account, active, with the registration's fields in the columns `fields`
   * maps them to and `createColumns`' values (a registration field that `fields` does not map is stored
   * only if `createColumns` writes it); null if the e-mail is taken (the unique index settles concurrent
   * creations: exactly one wins).
   */
  async create (account: NewAccountRecord): Promise<StoredAccount | null> {
    return await this.#insert(accountColumns(this.#mapping, account, 1, this.#createColumns), undefined)
  }

  /** An INSERT, then the row read back by its id (MySQL has no RETURNING); null if the e-mail or id is taken. */
  async #insert (columns: ColumnValue[], id: string | undefined): Promise<StoredAccount | null> {
    const m = this.#mapping
    // Integer ids come from AUTO_INCREMENT; UUID and text ids are made here (a column default could not be read back).
    if (id === undefined && (m.idType === 'uuid' || m.idType === 'text') && !columns.some(([column]) => column === m.id)) id = randomUUID()
    if (id !== undefined && !columns.some(([column]) => column === m.id)) columns.unshift([m.id, id])
    let result: Written
    try {
      [result] = await this.#pool.execute(`INSERT INTO ${m.table} (${columns.map(([column]) => column).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
        columns.map(([, value]) => value ?? null))
    } catch (err) {
      if (errno(err) === ER_DUP_ENTRY) return null
      throw err
    }
    const given = columns.find(([column]) => column === m.id)?.[1]
    const key = given === undefined ? String(result.insertId) : String(given)
    return accountOf(m, (await rows(this.#pool, this.#sql.byIdWithHash, [key]))[0])
  }

  /**
   * Activates or deactivates an account (needs a boolean active column). Deactivation advances the
   * credential version: the account's tokens stop working at the next request and stay dead after a
   * reactivation.
   */
  async setActive (id: string, active: boolean): Promise<boolean> {
    const statement = this.#sql.setActive
    if (statement === undefined) {
      throw new TypeError('MysqlAccountStore: setActive() needs a boolean active column; with an "activeCondition", ' +
        'change your own columns and advance the credential version in the same statement')
    }
    if (!isIdOfType(id, this.#mapping.idType)) return false
    return await written(this.#pool, statement, [active ? 1 : 0, active ? 1 : 0, id]) === 1
  }

  async updateEmail ({ id, expectedEmail, expectedCredentialVersion, newEmail }: EmailUpdate): Promise<boolean> {
    if (!isIdOfType(id, this.#mapping.idType)) return false
    const sql = this.#sql
    const email = normalizeEmail(newEmail)
    try {
      return await transaction(this.#pool, async (connection) => {
        // The account's row lock first: concurrent changes of one account run one after the other.
        const [row] = await rows(connection, sql.lockForEmail, [id])
        if (row === undefined || row.email !== expectedEmail || num(row.credentialVersion) !== expectedCredentialVersion) return false
        const holders = await rows(connection, sql.holders, [email])
        if (holders.some((holder) => holder.email === email && String(holder.id).toLowerCase() !== id.toLowerCase())) return false
        await written(connection, sql.setEmail, [email, id])
        return true
      })
    } catch (err) {
      // Another account took the address between the check and the write: the unique index refused it.
      if (errno(err) === ER_DUP_ENTRY) return false
      throw err
    }
  }

  /** Removes the row. Rows of yours that reference it (foreign keys) must cascade, or the delete fails (a 503). */
  async delete (id: string): Promise<boolean> {
    if (!isIdOfType(id, this.#mapping.idType)) return false
    return await written(this.#pool, this.#sql.delete, [id]) === 1
  }
}
