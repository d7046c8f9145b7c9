import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { MfaStore, StoredMfa } from '../types.js'
import { bool, num, quoteName, rows, TABLE_OPTIONS, transaction, written, type MysqlPool } from './sql.js'

export interface MysqlMfaStoreOptions {
  /** Your `mysql2/promise` Pool; the store never connects or ends it. */
  pool: MysqlPool
  /** Table name (default 'auth_mfa'), optionally `database.table`. */
  table?: string
}

/** The DDL of the second-factor table: one row per account, the secret sealed and the recovery codes hashed (a JSON array). */
export function mfaTableMysql (table = 'auth_mfa'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  account_id VARCHAR(255) NOT NULL PRIMARY KEY,
  secret TEXT NOT NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  last_step BIGINT NOT NULL DEFAULT 0,
  recovery_codes TEXT NOT NULL
) ${TABLE_OPTIONS};`
}

const PAGE = 500

function mfaStatements (name: string) {
  return {
    get: `SELECT secret, enabled, last_step, recovery_codes FROM ${name} WHERE account_id = ?`,
    lock: `SELECT enabled, recovery_codes FROM ${name} WHERE account_id = ? FOR UPDATE`,
    begin: `INSERT INTO ${name} (account_id, secret, enabled, last_step, recovery_codes) VALUES (?, ?, 0, 0, '[]')
      ON DUPLICATE KEY UPDATE secret = VALUES(secret), last_step = 0, recovery_codes = '[]'`,
    enable: `UPDATE ${name} SET enabled = 1, last_step = ?, recovery_codes = ? WHERE account_id = ? AND enabled = 0 AND secret = ?`,
    acceptStep: `UPDATE ${name} SET last_step = ? WHERE account_id = ? AND enabled = 1 AND last_step < ?`,
    setCodes: `UPDATE ${name} SET recovery_codes = ? WHERE account_id = ? AND enabled = 1`,
    disable: `DELETE FROM ${name} WHERE account_id = ?`,
    secrets: `SELECT account_id, secret FROM ${name} WHERE account_id > ? ORDER BY account_id LIMIT ${PAGE}`,
    reseal: `UPDATE ${name} SET secret = ? WHERE account_id = ? AND secret = ?`
  }
}

const OPTIONS: StoreOptionRules = { pool: 'mysql', table: 'name' }

/**
 * Second factors in MySQL or MariaDB. A change whose condition is on the row alone is one UPDATE (the condition and
 * the change see the same row: enable, acceptStep, reseal); one that reads the row first (begin, a recovery code's
 * use, disable) locks it in a transaction.
 */
export class MysqlMfaStore implements MfaStore {
  readonly #pool: MysqlPool
  readonly #sql: ReturnType<typeof mfaStatements>

  constructor (options: MysqlMfaStoreOptions) {
    checkStoreOptions('MysqlMfaStore', options, OPTIONS)
    const { pool, table = 'auth_mfa' } = options
    this.#pool = pool
    this.#sql = mfaStatements(quoteName(table))
  }

  async get (accountId: string): Promise<StoredMfa | null> {
    const [row] = await rows(this.#pool, this.#sql.get, [accountId])
    return row === undefined ? null : { secret: row.secret, enabled: bool(row.enabled), lastStep: num(row.last_step), recoveryCodes: JSON.parse(row.recovery_codes) }
  }

  async begin (accountId: string, secret: string): Promise<boolean> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      const [row] = await rows(connection, sql.lock, [accountId])
      if (row !== undefined && bool(row.enabled)) return false
      await written(connection, sql.begin, [accountId, secret])
      return true
    })
  }

  async enable (accountId: string, secret: string, lastStep: number, recoveryCodes: string[]): Promise<boolean> {
    return await written(this.#pool, this.#sql.enable, [lastStep, JSON.stringify(recoveryCodes), accountId, secret]) > 0
  }

  async acceptStep (accountId: string, step: number): Promise<boolean> {
    return await written(this.#pool, this.#sql.acceptStep, [step, accountId, step]) > 0
  }

  async useRecoveryCode (accountId: string, hashes: string[]): Promise<boolean> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      const [row] = await rows(connection, sql.lock, [accountId])
      if (row === undefined || !bool(row.enabled)) return false
      const codes = JSON.parse(row.recovery_codes) as string[]
      const left = codes.filter((code) => !hashes.includes(code))
      if (left.length === codes.length) return false
      await written(connection, sql.setCodes, [JSON.stringify(left), accountId])
      return true
    })
  }

  async replaceRecoveryCodes (accountId: string, recoveryCodes: string[]): Promise<boolean> {
    return await written(this.#pool, this.#sql.setCodes, [JSON.stringify(recoveryCodes), accountId]) > 0
  }

  async disable (accountId: string): Promise<boolean> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      const [row] = await rows(connection, sql.lock, [accountId])
      if (row === undefined) return false
      await written(connection, sql.disable, [accountId])
      return bool(row.enabled)
    })
  }

  async * secrets (): AsyncIterable<{ accountId: string, secret: string }> {
    // Pages in account order, each after the last one listed: no statement stays open between pages.
    let after = ''
    for (;;) {
      const page = await rows(this.#pool, this.#sql.secrets, [after])
      yield * page.map((row) => ({ accountId: row.account_id as string, secret: row.secret as string }))
      if (page.length < PAGE) return
      after = page[page.length - 1]!.account_id
    }
  }

  async reseal (accountId: string, secret: string, resealed: string): Promise<boolean> {
    return await written(this.#pool, this.#sql.reseal, [resealed, accountId, secret]) > 0
  }
}
