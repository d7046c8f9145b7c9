import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { OneTimeToken, OneTimeTokenStore } from '../types.js'
import { num, pruneNowAndThen, quoteIdentifier, quoteName, rows, TABLE_OPTIONS, transaction, written, type MysqlPool, type Row } from './sql.js'

export interface MysqlOneTimeTokenStoreOptions {
  /** Your `mysql2/promise` Pool; the store never connects or ends it. */
  pool: MysqlPool
  /** Table name (default 'auth_one_time_tokens'), optionally `database.table`. */
  table?: string
  /** Expired rows are deleted at most this often, during a put (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the one-time tokens table: one row per slot, the token's keyed hash but never the token; times in epoch ms. */
export function oneTimeTokensTableMysql (table = 'auth_one_time_tokens'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  slot VARCHAR(255) NOT NULL PRIMARY KEY,
  hash VARCHAR(255) NOT NULL,
  purpose VARCHAR(64) NOT NULL,
  account_id VARCHAR(255) NOT NULL,
  email VARCHAR(320) NOT NULL,
  credential_version BIGINT NOT NULL,
  password_hash TEXT NULL,
  fields TEXT NULL,
  expires_at BIGINT NOT NULL,
  KEY ${quoteIdentifier('expires_idx')} (expires_at),
  KEY ${quoteIdentifier('account_idx')} (account_id, purpose)
) ${TABLE_OPTIONS};`
}

const TOKEN = 'slot, hash, purpose, account_id, email, credential_version, password_hash, fields, expires_at'
const LIVE = 'slot = ? AND hash = ? AND purpose = ? AND expires_at > ?'

function tokenStatements (name: string) {
  return {
    put: `INSERT INTO ${name} (slot, hash, purpose, account_id, email, credential_version, password_hash, fields, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON DUPLICATE KEY UPDATE hash = VALUES(hash), purpose = VALUES(purpose), account_id = VALUES(account_id), email = VALUES(email),
        credential_version = VALUES(credential_version), password_hash = VALUES(password_hash), fields = VALUES(fields), expires_at = VALUES(expires_at)`,
    find: `SELECT ${TOKEN} FROM ${name} WHERE ${LIVE}`,
    lock: `SELECT ${TOKEN} FROM ${name} WHERE ${LIVE} FOR UPDATE`,
    /** A consistent read: which account's tokens consumeFirst must lock. */
    owner: `SELECT account_id FROM ${name} WHERE ${LIVE} AND account_id <> ''`,
    group: `SELECT ${TOKEN} FROM ${name} WHERE account_id = ? AND purpose = ? FOR UPDATE`,
    removeGroup: `DELETE FROM ${name} WHERE account_id = ? AND purpose = ?`,
    list: `SELECT ${TOKEN} FROM ${name} WHERE account_id = ? AND account_id <> '' AND purpose = ? AND expires_at > ?`,
    remove: `DELETE FROM ${name} WHERE slot = ?`,
    removeAll: `DELETE FROM ${name} WHERE account_id = ? AND account_id <> ''`,
    prune: `DELETE FROM ${name} WHERE expires_at <= ?`
  }
}

function tokenOf (row: Row | undefined): OneTimeToken | null {
  if (row === undefined) return null
  return {
    purpose: row.purpose,
    accountId: row.account_id,
    email: row.email,
    credentialVersion: num(row.credential_version),
    ...(row.password_hash === null ? {} : { passwordHash: row.password_hash }),
    ...(row.fields === null ? {} : { fields: JSON.parse(row.fields) })
  }
}

const OPTIONS: StoreOptionRules = { pool: 'mysql', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * One-time tokens in MySQL or MariaDB: consume locks the token's row, deletes it and commits, so of concurrent
 * callers one finds it (the others' locking reads wait, then find nothing); consumeFirst locks every token of the
 * account and purpose, decides and deletes them in one transaction.
 */
export class MysqlOneTimeTokenStore implements OneTimeTokenStore {
  readonly #pool: MysqlPool
  readonly #sql: ReturnType<typeof tokenStatements>
  readonly #pruneNowAndThen: () => void

  constructor (options: MysqlOneTimeTokenStoreOptions) {
    checkStoreOptions('MysqlOneTimeTokenStore', options, OPTIONS)
    const { pool, table = 'auth_one_time_tokens', pruneIntervalMs = 60_000 } = options
    this.#pool = pool
    this.#sql = tokenStatements(quoteName(table))
    this.#pruneNowAndThen = pruneNowAndThen(async () => await this.prune(), pruneIntervalMs)
  }

  async put (slot: string, hash: string, token: OneTimeToken, ttlMs: number): Promise<void> {
    this.#pruneNowAndThen()
    await written(this.#pool, this.#sql.put, [
      slot, hash, token.purpose, token.accountId, token.email, token.credentialVersion, token.passwordHash ?? null,
      token.fields === undefined ? null : JSON.stringify(token.fields), Date.now() + ttlMs
    ])
  }

  async find (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    return tokenOf((await rows(this.#pool, this.#sql.find, [slot, hash, purpose, Date.now()]))[0])
  }

  async consume (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      const [row] = await rows(connection, sql.lock, [slot, hash, purpose, Date.now()])
      if (row === undefined) return null
      await written(connection, sql.remove, [slot])
      return tokenOf(row)
    })
  }

  async consumeFirst (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      const [owner] = await rows(connection, sql.owner, [slot, hash, purpose, Date.now()])
      if (owner === undefined) return null
      // Locks the account's tokens of this purpose through one index range, target included: one order, whichever slot.
      const group = await rows(connection, sql.group, [owner.account_id, purpose])
      const now = Date.now()
      const live = group.filter((row) => num(row.expires_at) > now)
      const target = live.find((row) => row.slot === slot && row.hash === hash)
      if (target === undefined || live.some((row) => num(row.expires_at) < num(target.expires_at))) return null
      await written(connection, sql.removeGroup, [owner.account_id, purpose])
      return tokenOf(target)
    })
  }

  async list (accountId: string, purpose: string): Promise<OneTimeToken[]> {
    return (await rows(this.#pool, this.#sql.list, [accountId, purpose, Date.now()])).map((row) => tokenOf(row)!)
  }

  async remove (slot: string): Promise<void> {
    await written(this.#pool, this.#sql.remove, [slot])
  }

  async removeAll (accountId: string): Promise<void> {
    await written(this.#pool, this.#sql.removeAll, [accountId])
  }

  /** Deletes expired rows; resolves how many. */
  async prune (): Promise<number> {
    return await written(this.#pool, this.#sql.prune, [Date.now()])
  }
}
