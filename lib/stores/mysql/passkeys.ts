import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { PasskeyAddResult, PasskeyStore, StoredPasskey } from '../types.js'
import { bool, ER_DUP_ENTRY, errno, num, quoteIdentifier, quoteName, rows, TABLE_OPTIONS, transaction, written, type MysqlConnection, type MysqlPool, type Row } from './sql.js'

export interface MysqlPasskeyStoreOptions {
  /** Your `mysql2/promise` Pool; the store never connects or ends it. */
  pool: MysqlPool
  /**
   * Table name (default 'auth_passkeys'), optionally `database.table`; the user handles live in `<table>_handles`, the
   * accounts' generations in `<table>_generations`.
   */
  table?: string
}

/**
 * The DDL of the passkey tables: one row per credential (public key, counter, flags, name, times: nothing that
 * signs in), one per account's user handle, one per account's generation (the row each add and removal locks).
 */
export function passkeysTableMysql (table = 'auth_passkeys'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  credential_id VARCHAR(1400) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  account_id VARCHAR(255) NOT NULL,
  public_key TEXT NOT NULL,
  counter BIGINT NOT NULL DEFAULT 0,
  backup_eligible TINYINT(1) NOT NULL,
  backed_up TINYINT(1) NOT NULL,
  transports TEXT NOT NULL,
  name VARCHAR(255) NOT NULL,
  created_at DOUBLE NOT NULL,
  last_used_at DOUBLE NULL,
  KEY ${quoteIdentifier('account_idx')} (account_id, created_at)
) ${TABLE_OPTIONS};
CREATE TABLE IF NOT EXISTS ${quoteName(`${table}_handles`)} (
  account_id VARCHAR(255) NOT NULL PRIMARY KEY,
  handle VARCHAR(255) NOT NULL,
  UNIQUE KEY ${quoteIdentifier('handle_key')} (handle)
) ${TABLE_OPTIONS};
CREATE TABLE IF NOT EXISTS ${quoteName(`${table}_generations`)} (
  account_id VARCHAR(255) NOT NULL PRIMARY KEY,
  generation BIGINT NOT NULL
) ${TABLE_OPTIONS};`
}

const COLUMNS = 'credential_id, account_id, public_key, counter, backup_eligible, backed_up, transports, name, created_at, last_used_at'

function passkeyStatements (table: string) {
  const name = quoteName(table)
  const handles = quoteName(`${table}_handles`)
  const generations = quoteName(`${table}_generations`)
  return {
    addHandle: `INSERT INTO ${handles} (account_id, handle) VALUES (?, ?) ON DUPLICATE KEY UPDATE account_id = account_id`,
    handle: `SELECT handle FROM ${handles} WHERE account_id = ?`,
    generation: `SELECT generation FROM ${generations} WHERE account_id = ?`,
    /** The account's row lock, taken first by every add and removal (ON DUPLICATE KEY UPDATE locks an existing row too). */
    lock: `INSERT INTO ${generations} (account_id, generation) VALUES (?, 0) ON DUPLICATE KEY UPDATE generation = generation`,
    lockedGeneration: `SELECT generation FROM ${generations} WHERE account_id = ? FOR UPDATE`,
    exists: `SELECT 1 AS found FROM ${name} WHERE credential_id = ?`,
    count: `SELECT count(*) AS n FROM ${name} WHERE account_id = ?`,
    insert: `INSERT INTO ${name} (credential_id, account_id, public_key, counter, backup_eligible, backed_up, transports, name, created_at, last_used_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
    get: `SELECT ${COLUMNS} FROM ${name} WHERE credential_id = ?`,
    list: `SELECT ${COLUMNS} FROM ${name} WHERE account_id = ? ORDER BY created_at, credential_id`,
    use: `UPDATE ${name} SET counter = ?, backed_up = ?, last_used_at = ? WHERE credential_id = ? AND counter = ?`,
    remove: `DELETE FROM ${name} WHERE account_id = ? AND credential_id = ?`,
    advance: `UPDATE ${generations} SET generation = generation + 1 WHERE account_id = ?`,
    removeAll: `DELETE FROM ${name} WHERE account_id = ?`,
    forgetHandle: `DELETE FROM ${handles} WHERE account_id = ?`,
    forgetGeneration: `DELETE FROM ${generations} WHERE account_id = ?`
  }
}

function passkeyOf (row: Row | undefined): StoredPasskey | null {
  if (row === undefined) return null
  return {
    id: row.credential_id,
    accountId: row.account_id,
    publicKey: row.public_key,
    counter: num(row.counter),
    backupEligible: bool(row.backup_eligible),
    backedUp: bool(row.backed_up),
    transports: JSON.parse(row.transports),
    name: row.name,
    createdAt: num(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : num(row.last_used_at)
  }
}

const OPTIONS: StoreOptionRules = { pool: 'mysql', table: 'name' }

/**
 * Passkeys in MySQL or MariaDB. An add and a removal of all first lock the account's generation row, then decide
 * in the same transaction: each sees what the one before it wrote, so an account never passes `max` and an add that
 * read an older generation stores nothing. A use updates the row only if its counter is still the expected one.
 */
export class MysqlPasskeyStore implements PasskeyStore {
  readonly #pool: MysqlPool
  readonly #sql: ReturnType<typeof passkeyStatements>

  constructor (options: MysqlPasskeyStoreOptions) {
    checkStoreOptions('MysqlPasskeyStore', options, OPTIONS)
    const { pool, table = 'auth_passkeys' } = options
    this.#pool = pool
    this.#sql = passkeyStatements(table)
  }

  async generation (accountId: string): Promise<number> {
    const [row] = await rows(this.#pool, this.#sql.generation, [accountId])
    return row === undefined ? 0 : num(row.generation)
  }

  async userHandle (accountId: string, candidate: string): Promise<string> {
    await written(this.#pool, this.#sql.addHandle, [accountId, candidate])
    const [row] = await rows(this.#pool, this.#sql.handle, [accountId])
    // Removed by a forget() in between: the account is being deleted; the candidate names nobody.
    return row?.handle ?? candidate
  }

  async #lock (connection: MysqlConnection, accountId: string): Promise<number> {
    await written(connection, this.#sql.lock, [accountId])
    const [row] = await rows(connection, this.#sql.lockedGeneration, [accountId])
    return num(row!.generation)
  }

  async add (passkey: StoredPasskey, max: number, generation: number): Promise<PasskeyAddResult> {
    const sql = this.#sql
    try {
      return await transaction(this.#pool, async (connection) => {
        if (await this.#lock(connection, passkey.accountId) !== generation) return 'outrun'
        if ((await rows(connection, sql.exists, [passkey.id])).length > 0) return 'duplicate'
        if (num((await rows(connection, sql.count, [passkey.accountId]))[0]!.n) >= max) return 'limit'
        await written(connection, sql.insert, [
          passkey.id, passkey.accountId, passkey.publicKey, passkey.counter, passkey.backupEligible ? 1 : 0, passkey.backedUp ? 1 : 0,
          JSON.stringify(passkey.transports), passkey.name, passkey.createdAt
        ])
        return 'added'
      })
    } catch (err) {
      // Another account's add of the same credential id committed between the check and the insert.
      if (errno(err) === ER_DUP_ENTRY) return 'duplicate'
      throw err
    }
  }

  async get (credentialId: string): Promise<StoredPasskey | null> {
    return passkeyOf((await rows(this.#pool, this.#sql.get, [credentialId]))[0])
  }

  async list (accountId: string): Promise<StoredPasskey[]> {
    return (await rows(this.#pool, this.#sql.list, [accountId])).map((row) => passkeyOf(row)!)
  }

  async use (credentialId: string, expectedCounter: number, counter: number, backedUp: boolean, usedAt: number): Promise<boolean> {
    return await written(this.#pool, this.#sql.use, [counter, backedUp ? 1 : 0, usedAt, credentialId, expectedCounter]) > 0
  }

  async remove (accountId: string, credentialId: string): Promise<boolean> {
    return await written(this.#pool, this.#sql.remove, [accountId, credentialId]) > 0
  }

  async removeAll (accountId: string): Promise<number> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      await this.#lock(connection, accountId)
      await written(connection, sql.advance, [accountId])
      return await written(connection, sql.removeAll, [accountId])
    })
  }

  async forget (accountId: string): Promise<number> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      await this.#lock(connection, accountId)
      const removed = await written(connection, sql.removeAll, [accountId])
      await written(connection, sql.forgetHandle, [accountId])
      await written(connection, sql.forgetGeneration, [accountId])
      return removed
    })
  }
}
