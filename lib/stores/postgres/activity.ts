import type { ActivityRecord, ActivityStore } from '../types.js'
import { baseName, prepare, pruneNowAndThen, quoteName, type PostgresConnection, type Queryable, type Statement } from './sql.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

const DAY_MS = 86_400_000

export interface PostgresActivityStoreOptions extends PostgresConnection {
  /** Table name, optionally schema-qualified (default 'auth_activity'). */
  table?: string
  /** Milliseconds a record is kept (default 90 days); older rows are deleted in the background of an add. */
  retentionMs?: number
  /** Old rows are deleted at most this often (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the activity table: one row per security event of an account, never a password, hash or token. */
export function activityTableSql (table = 'auth_activity'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id text NOT NULL,
  type text NOT NULL,
  time timestamptz NOT NULL,
  request_id text,
  ip text,
  details jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_account_time_idx`)} ON ${name} (account_id, time DESC);
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_time_idx`)} ON ${name} (time);`
}

const RETENTION = "now() - $1::float8 * interval '1 millisecond'"

const OPTIONS: StoreOptionRules = { pool: 'pool', preparedStatements: 'boolean', table: 'name', retentionMs: 'milliseconds', pruneIntervalMs: 'milliseconds' }

/** Security events in PostgreSQL, shared by every instance, kept `retentionMs`. */
export class PostgresActivityStore implements ActivityStore {
  readonly #pool: Queryable
  readonly #retentionMs: number
  readonly #pruneNowAndThen: () => void
  readonly #sql: Record<'add' | 'list' | 'forget' | 'prune', Statement>

  constructor (options: PostgresActivityStoreOptions) {
    checkStoreOptions('PostgresActivityStore', options, OPTIONS)
    const { pool, preparedStatements = true, table = 'auth_activity', retentionMs = 90 * DAY_MS, pruneIntervalMs = 60_000 } = options
    if (!Number.isSafeInteger(retentionMs) || retentionMs < 1000) throw new TypeError('PostgresActivityStore: retentionMs must be a whole number of milliseconds from 1000')
    const name = quoteName(table)
    this.#pool = pool
    this.#retentionMs = retentionMs
    this.#pruneNowAndThen = pruneNowAndThen(async () => await this.prune(), pruneIntervalMs)
    this.#sql = prepare({
      add: `INSERT INTO ${name} (account_id, type, time, request_id, ip, details) VALUES ($1, $2, to_timestamp($3::float8 / 1000), $4, $5, $6::jsonb)`,
      list: `SELECT account_id AS "accountId", type, (extract(epoch from time) * 1000)::float8 AS time, request_id AS "requestId", ip, details
        FROM ${name} WHERE account_id = $2 AND time > ${RETENTION} ORDER BY time DESC, id DESC LIMIT $3`,
      forget: `DELETE FROM ${name} WHERE account_id = $1`,
      prune: `DELETE FROM ${name} WHERE time <= ${RETENTION}`
    }, preparedStatements)
  }

  async add ({ accountId, type, time, requestId, ip, details }: ActivityRecord): Promise<void> {
    this.#pruneNowAndThen()
    await this.#pool.query({ ...this.#sql.add, values: [accountId, type, time, requestId ?? null, ip ?? null, JSON.stringify(details)] })
  }

  async list (accountId: string, limit: number): Promise<ActivityRecord[]> {
    const { rows } = await this.#pool.query({ ...this.#sql.list, values: [this.#retentionMs, accountId, limit] })
    return rows.map((row: ActivityRecord & { requestId: string | null, ip: string | null }) => ({
      type: row.type,
      time: Math.round(Number(row.time)),
      accountId: row.accountId,
      ...(row.requestId === null ? {} : { requestId: row.requestId }),
      ...(row.ip === null ? {} : { ip: row.ip }),
      details: row.details
    }))
  }

  async forget (accountId: string): Promise<void> {
    await this.#pool.query({ ...this.#sql.forget, values: [accountId] })
  }

  /** Deletes the rows older than the retention; resolves how many. */
  async prune (): Promise<number> {
    return (await this.#pool.query({ ...this.#sql.prune, values: [this.#retentionMs] })).rowCount ?? 0
  }
}
