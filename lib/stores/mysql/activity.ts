import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { ActivityRecord, ActivityStore } from '../types.js'
import { num, pruneNowAndThen, quoteIdentifier, quoteName, rows, TABLE_OPTIONS, written, type MysqlPool } from './sql.js'

const DAY_MS = 86_400_000

export interface MysqlActivityStoreOptions {
  /** Your `mysql2/promise` Pool; the store never connects or ends it. */
  pool: MysqlPool
  /** Table name (default 'auth_activity'), optionally `database.table`. */
  table?: string
  /** Milliseconds a record is kept (default 90 days); older rows are deleted during an add. */
  retentionMs?: number
  /** Old rows are deleted at most this often (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the activity table: one row per security event of an account, never a password, hash or token. */
export function activityTableMysql (table = 'auth_activity'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  account_id VARCHAR(255) NOT NULL,
  type VARCHAR(64) NOT NULL,
  time BIGINT NOT NULL,
  request_id VARCHAR(255) NULL,
  ip VARCHAR(64) NULL,
  details TEXT NOT NULL,
  KEY ${quoteIdentifier('account_time_idx')} (account_id, time),
  KEY ${quoteIdentifier('time_idx')} (time)
) ${TABLE_OPTIONS};`
}

function activityStatements (name: string) {
  return {
    add: `INSERT INTO ${name} (account_id, type, time, request_id, ip, details) VALUES (?, ?, ?, ?, ?, ?)`,
    // LIMIT takes no placeholder in every server and driver combination: the limit is written in, checked whole.
    list: (limit: number) => `SELECT account_id, type, time, request_id, ip, details FROM ${name}
      WHERE account_id = ? AND time > ? ORDER BY time DESC, id DESC LIMIT ${limit}`,
    forget: `DELETE FROM ${name} WHERE account_id = ?`,
    prune: `DELETE FROM ${name} WHERE time <= ?`
  }
}

const OPTIONS: StoreOptionRules = { pool: 'mysql', table: 'name', retentionMs: 'milliseconds', pruneIntervalMs: 'milliseconds' }

/** Security events in MySQL or MariaDB, kept `retentionMs`. */
export class MysqlActivityStore implements ActivityStore {
  readonly #pool: MysqlPool
  readonly #sql: ReturnType<typeof activityStatements>
  readonly #retentionMs: number
  readonly #pruneNowAndThen: () => void

  constructor (options: MysqlActivityStoreOptions) {
    checkStoreOptions('MysqlActivityStore', options, OPTIONS)
    const { pool, table = 'auth_activity', retentionMs = 90 * DAY_MS, pruneIntervalMs = 60_000 } = options
    if (!Number.isSafeInteger(retentionMs) || retentionMs < 1000) throw new TypeError('MysqlActivityStore: retentionMs must be a whole number of milliseconds from 1000')
    this.#pool = pool
    this.#retentionMs = retentionMs
    this.#sql = activityStatements(quoteName(table))
    this.#pruneNowAndThen = pruneNowAndThen(async () => await this.prune(), pruneIntervalMs)
  }

  async add ({ accountId, type, time, requestId, ip, details }: ActivityRecord): Promise<void> {
    this.#pruneNowAndThen()
    await written(this.#pool, this.#sql.add, [accountId, type, Math.round(time), requestId ?? null, ip ?? null, JSON.stringify(details)])
  }

  async list (accountId: string, limit: number): Promise<ActivityRecord[]> {
    const whole = Math.max(0, Math.floor(Number(limit)) || 0)
    return (await rows(this.#pool, this.#sql.list(whole), [accountId, Date.now() - this.#retentionMs])).map((row) => ({
      type: row.type,
      time: num(row.time),
      accountId: row.account_id,
      ...(row.request_id === null ? {} : { requestId: row.request_id }),
      ...(row.ip === null ? {} : { ip: row.ip }),
      details: JSON.parse(row.details)
    }))
  }

  async forget (accountId: string): Promise<void> {
    await written(this.#pool, this.#sql.forget, [accountId])
  }

  /** Deletes the rows older than the retention; resolves how many. */
  async prune (): Promise<number> {
    return await written(this.#pool, this.#sql.prune, [Date.now() - this.#retentionMs])
  }
}
