import { markProcessLocal } from '../process-local.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { ActivityRecord, ActivityStore } from '../types.js'
import { many, prepareAll, pruneNowAndThen, quoteName, type Prepared, type SqliteDatabase } from './sql.js'

const DAY_MS = 86_400_000

export interface SqliteActivityStoreOptions {
  /** Your `better-sqlite3` Database; the store never opens or closes it. */
  database: SqliteDatabase
  /** Table name (default 'auth_activity'). */
  table?: string
  /** Milliseconds a record is kept (default 90 days); older rows are deleted during an add. */
  retentionMs?: number
  /** Old rows are deleted at most this often (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the activity table: one row per security event of an account, never a password, hash or token. */
export function activityTableSqlite (table = 'auth_activity'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL,
  type TEXT NOT NULL,
  time INTEGER NOT NULL,
  request_id TEXT,
  ip TEXT,
  details TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_account_time_idx`)} ON ${name} (account_id, time DESC);
CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_time_idx`)} ON ${name} (time);`
}

function activityStatements (name: string) {
  return {
    add: `INSERT INTO ${name} (account_id, type, time, request_id, ip, details) VALUES (@accountId, @type, @time, @requestId, @ip, @details)`,
    list: `SELECT account_id AS accountId, type, time, request_id AS requestId, ip, details FROM ${name}
      WHERE account_id = @accountId AND time > @since ORDER BY time DESC, id DESC LIMIT @limit`,
    forget: `DELETE FROM ${name} WHERE account_id = @accountId`,
    prune: `DELETE FROM ${name} WHERE time <= @since`
  }
}

const OPTIONS: StoreOptionRules = { database: 'database', table: 'name', retentionMs: 'milliseconds', pruneIntervalMs: 'milliseconds' }

/** Security events in SQLite, kept `retentionMs`. */
export class SqliteActivityStore implements ActivityStore {
  readonly #sql: Prepared<typeof activityStatements>
  readonly #retentionMs: number
  readonly #pruneNowAndThen: () => void

  constructor (options: SqliteActivityStoreOptions) {
    checkStoreOptions('SqliteActivityStore', options, OPTIONS)
    markProcessLocal(this)
    const { database, table = 'auth_activity', retentionMs = 90 * DAY_MS, pruneIntervalMs = 60_000 } = options
    if (!Number.isSafeInteger(retentionMs) || retentionMs < 1000) throw new TypeError('SqliteActivityStore: retentionMs must be a whole number of milliseconds from 1000')
    this.#retentionMs = retentionMs
    this.#sql = prepareAll('SqliteActivityStore', database, activityStatements(quoteName(table)))
    this.#pruneNowAndThen = pruneNowAndThen(() => this.#prune(), pruneIntervalMs)
  }

  async add ({ accountId, type, time, requestId, ip, details }: ActivityRecord): Promise<void> {
    this.#pruneNowAndThen()
    this.#sql.add.run({ accountId, type, time: Math.round(time), requestId: requestId ?? null, ip: ip ?? null, details: JSON.stringify(details) })
  }

  async list (accountId: string, limit: number): Promise<ActivityRecord[]> {
    return many(this.#sql.list, { accountId, limit, since: Date.now() - this.#retentionMs }).map((row) => ({
      type: row.type,
      time: row.time,
      accountId: row.accountId,
      ...(row.requestId === null ? {} : { requestId: row.requestId }),
      ...(row.ip === null ? {} : { ip: row.ip }),
      details: JSON.parse(row.details)
    }))
  }

  async forget (accountId: string): Promise<void> {
    this.#sql.forget.run({ accountId })
  }

  /** Deletes the rows older than the retention; resolves how many. */
  async prune (): Promise<number> {
    return this.#prune()
  }

  #prune (): number {
    return this.#sql.prune.run({ since: Date.now() - this.#retentionMs }).changes
  }
}
