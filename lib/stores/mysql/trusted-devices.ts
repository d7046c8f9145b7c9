import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { NewTrustedDevice, TrustedDeviceInfo, TrustedDeviceStore } from '../types.js'
import { num, placeholders, pruneNowAndThen, quoteIdentifier, quoteName, rows, TABLE_OPTIONS, transaction, written, type MysqlPool } from './sql.js'

export interface MysqlTrustedDeviceStoreOptions {
  /** Your `mysql2/promise` Pool; the store never connects or ends it. */
  pool: MysqlPool
  /** Table name (default 'auth_trusted_devices'), optionally `database.table`; the generations live beside it in `<table>_generations`. */
  table?: string
  /** Rows of ended trusts are deleted at most this often, during a trust() (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the trusted-device tables: one row per trust (a keyed hash of the device, never a token), one generation per account. */
export function trustedDevicesTableMysql (table = 'auth_trusted_devices'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(`${table}_generations`)} (
  account_id VARCHAR(255) NOT NULL PRIMARY KEY,
  generation BIGINT NOT NULL
) ${TABLE_OPTIONS};
CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  account_id VARCHAR(255) NOT NULL,
  device_hash VARCHAR(255) NOT NULL,
  id VARCHAR(255) NOT NULL,
  label VARCHAR(255) NOT NULL,
  generation BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT NOT NULL,
  trusted_until BIGINT NOT NULL,
  PRIMARY KEY (account_id, device_hash),
  KEY ${quoteIdentifier('expiry_idx')} (trusted_until)
) ${TABLE_OPTIONS};`
}

function trustedDeviceStatements (table: string) {
  const name = quoteName(table)
  const generations = quoteName(`${table}_generations`)
  const current = `COALESCE((SELECT g.generation FROM ${generations} g WHERE g.account_id = t.account_id), 0)`
  const live = `t.account_id = ? AND t.generation = ${current} AND t.trusted_until > ?`
  return {
    generation: `SELECT generation FROM ${generations} WHERE account_id = ?`,
    /** A shared lock on the generation row (or on the gap where it would go): endAll() waits for the trust to commit. */
    sharedGeneration: `SELECT generation FROM ${generations} WHERE account_id = ? LOCK IN SHARE MODE`,
    trust: `INSERT INTO ${name} (account_id, device_hash, id, label, generation, created_at, last_used_at, trusted_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON DUPLICATE KEY UPDATE id = VALUES(id), label = VALUES(label), generation = VALUES(generation), created_at = VALUES(created_at),
        last_used_at = VALUES(last_used_at), trusted_until = VALUES(trusted_until)`,
    list: `SELECT t.id, t.label, t.created_at, t.trusted_until, t.last_used_at FROM ${name} t WHERE ${live} ORDER BY t.created_at, t.id`,
    touch: `UPDATE ${name} SET last_used_at = ? WHERE account_id = ? AND device_hash = ?`,
    remove: `DELETE t FROM ${name} t WHERE ${live} AND t.id = ?`,
    advance: `INSERT INTO ${generations} (account_id, generation) VALUES (?, 1) ON DUPLICATE KEY UPDATE generation = generation + 1`,
    older: `DELETE FROM ${name} WHERE account_id = ? AND generation < ?`,
    forgetTrusts: `DELETE FROM ${name} WHERE account_id = ?`,
    forgetGeneration: `DELETE FROM ${generations} WHERE account_id = ?`,
    prune: `DELETE t FROM ${name} t WHERE t.trusted_until <= ? OR t.generation < ${current}`,
    live
  }
}

const OPTIONS: StoreOptionRules = { pool: 'mysql', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * Devices trusted for the second factor, in MySQL or MariaDB. A trust is live while its generation is the account's
 * and it has not expired. trust() reads the generation with a shared lock and writes in one transaction, endAll()
 * advances it (an exclusive lock) and deletes the older trusts in one: a trust written with the older generation
 * either committed before the advance (and is deleted) or waits for it and is refused.
 */
export class MysqlTrustedDeviceStore implements TrustedDeviceStore {
  readonly #pool: MysqlPool
  readonly #name: string
  readonly #sql: ReturnType<typeof trustedDeviceStatements>
  readonly #pruneNowAndThen: () => void

  constructor (options: MysqlTrustedDeviceStoreOptions) {
    checkStoreOptions('MysqlTrustedDeviceStore', options, OPTIONS)
    const { pool, table = 'auth_trusted_devices', pruneIntervalMs = 60_000 } = options
    this.#pool = pool
    this.#name = quoteName(table)
    this.#sql = trustedDeviceStatements(table)
    this.#pruneNowAndThen = pruneNowAndThen(async () => await this.prune(), pruneIntervalMs)
  }

  async generation (accountId: string): Promise<number> {
    const [row] = await rows(this.#pool, this.#sql.generation, [accountId])
    return row === undefined ? 0 : num(row.generation)
  }

  async trust (accountId: string, { id, deviceHash, label }: NewTrustedDevice, ttlMs: number, generation: number): Promise<boolean> {
    this.#pruneNowAndThen()
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      const [row] = await rows(connection, sql.sharedGeneration, [accountId])
      if ((row === undefined ? 0 : num(row.generation)) !== generation) return false
      const now = Date.now()
      await written(connection, sql.trust, [accountId, deviceHash, id, label, generation, now, now, now + ttlMs])
      return true
    })
  }

  async use (accountId: string, deviceHashes: string[]): Promise<{ id: string, generation: number } | null> {
    if (deviceHashes.length === 0) return null
    const now = Date.now()
    const [row] = await rows(this.#pool, `SELECT t.id, t.generation, t.device_hash FROM ${this.#name} t WHERE ${this.#sql.live} AND t.device_hash IN ${placeholders(deviceHashes.length)} LIMIT 1`,
      [accountId, now, ...deviceHashes])
    if (row === undefined) return null
    await written(this.#pool, this.#sql.touch, [now, accountId, row.device_hash])
    return { id: row.id, generation: num(row.generation) }
  }

  async list (accountId: string): Promise<TrustedDeviceInfo[]> {
    return (await rows(this.#pool, this.#sql.list, [accountId, Date.now()])).map((row) => ({
      id: row.id, label: row.label, createdAt: num(row.created_at), trustedUntil: num(row.trusted_until), lastUsedAt: num(row.last_used_at)
    }))
  }

  async remove (accountId: string, id: string): Promise<boolean> {
    return await written(this.#pool, this.#sql.remove, [accountId, Date.now(), id]) > 0
  }

  async endAll (accountId: string): Promise<number> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      await written(connection, sql.advance, [accountId])
      const [row] = await rows(connection, sql.generation, [accountId])
      const generation = num(row!.generation)
      await written(connection, sql.older, [accountId, generation])
      return generation
    })
  }

  async forget (accountId: string): Promise<void> {
    const sql = this.#sql
    await transaction(this.#pool, async (connection) => {
      await written(connection, sql.forgetTrusts, [accountId])
      await written(connection, sql.forgetGeneration, [accountId])
    })
  }

  /** Deletes the rows of trusts that ended (expired, or of an older generation); resolves how many. */
  async prune (): Promise<number> {
    return await written(this.#pool, this.#sql.prune, [Date.now()])
  }
}
