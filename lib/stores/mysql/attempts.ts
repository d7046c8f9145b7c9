import { admit, afterOutcome, blockDuration, liveFailures, type AttemptCounts } from '../attempt-rules.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { AttemptOutcome, AttemptStore, Reservation, ThrottlePolicy } from '../types.js'
import { num, pruneNowAndThen, quoteIdentifier, quoteName, rows, TABLE_OPTIONS, transaction, written, type MysqlConnection, type MysqlPool } from './sql.js'

export interface MysqlAttemptStoreOptions {
  /** Your `mysql2/promise` Pool; the store never connects or ends it. */
  pool: MysqlPool
  /** Table name (default 'auth_attempts'), optionally `database.table`. */
  table?: string
  /** Rows with nothing left to count are deleted at most this often, during a reservation (default 60000 ms). */
  pruneIntervalMs?: number
}

/**
 * The DDL of the attempts table: one row per key (an HMAC of an e-mail, or `device.<id>`), the counts of
 * lib/stores/attempt-rules.ts and the open reservations as JSON (ticket → lease end), times in epoch ms. `key_group`
 * (the part before a slash) serves clearGroup().
 */
export function attemptsTableMysql (table = 'auth_attempts'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  attempt_key VARCHAR(255) NOT NULL PRIMARY KEY,
  key_group VARCHAR(255) NULL,
  failures BIGINT NOT NULL DEFAULT 0,
  blocked_until BIGINT NOT NULL DEFAULT 0,
  forget_at BIGINT NOT NULL DEFAULT 0,
  leases TEXT NOT NULL,
  expires_at BIGINT NOT NULL DEFAULT 0,
  KEY ${quoteIdentifier('expires_idx')} (expires_at),
  KEY ${quoteIdentifier('group_idx')} (key_group)
) ${TABLE_OPTIONS};`
}

function attemptStatements (name: string) {
  return {
    // Takes the key's row lock (an existing row's too: ON DUPLICATE KEY UPDATE locks it exclusively) before reading it.
    lock: `INSERT INTO ${name} (attempt_key, key_group, leases) VALUES (?, ?, '{}') ON DUPLICATE KEY UPDATE attempt_key = attempt_key`,
    row: `SELECT failures, blocked_until, forget_at, leases, expires_at FROM ${name} WHERE attempt_key = ? FOR UPDATE`,
    write: `UPDATE ${name} SET failures = ?, blocked_until = ?, forget_at = ?, leases = ?, expires_at = ? WHERE attempt_key = ?`,
    clear: `DELETE FROM ${name} WHERE attempt_key = ?`,
    clearGroup: `DELETE FROM ${name} WHERE key_group = ?`,
    prune: `DELETE FROM ${name} WHERE expires_at < ?`
  }
}

interface State extends AttemptCounts {
  /** Open reservations: ticket → the end of its lease (epoch ms). */
  leases: Record<string, number>
  /** When the row has nothing left to count. */
  expiresAt: number
}

const groupOf = (key: string): string | null => key.includes('/') ? key.slice(0, key.indexOf('/')) : null

const OPTIONS: StoreOptionRules = { pool: 'mysql', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * Attempt counters (per e-mail and per known device) in MySQL or MariaDB. reserve and settle each lock the key's row,
 * apply the rules of lib/stores/attempt-rules.ts (admit, afterOutcome: the functions the memory and SQLite stores run,
 * which the PostgreSQL functions and the Redis scripts mirror) and write it back in one transaction, so concurrent
 * reservations of one key, from any instance, are serialised.
 */
export class MysqlAttemptStore implements AttemptStore {
  readonly #pool: MysqlPool
  readonly #sql: ReturnType<typeof attemptStatements>
  readonly #pruneNowAndThen: () => void

  constructor (options: MysqlAttemptStoreOptions) {
    checkStoreOptions('MysqlAttemptStore', options, OPTIONS)
    const { pool, table = 'auth_attempts', pruneIntervalMs = 60_000 } = options
    this.#pool = pool
    this.#sql = attemptStatements(quoteName(table))
    this.#pruneNowAndThen = pruneNowAndThen(async () => await this.prune(), pruneIntervalMs)
  }

  async #locked (connection: MysqlConnection, key: string): Promise<State> {
    await written(connection, this.#sql.lock, [key, groupOf(key)])
    const [row] = await rows(connection, this.#sql.row, [key])
    return { failures: num(row!.failures), blockedUntil: num(row!.blocked_until), forgetAt: num(row!.forget_at), leases: JSON.parse(row!.leases), expiresAt: num(row!.expires_at) }
  }

  async #write (connection: MysqlConnection, key: string, state: State): Promise<void> {
    await written(connection, this.#sql.write, [state.failures, state.blockedUntil, state.forgetAt, JSON.stringify(state.leases), state.expiresAt, key])
  }

  async reserve (key: string, ticket: string, policy: ThrottlePolicy): Promise<Reservation> {
    this.#pruneNowAndThen()
    return await transaction(this.#pool, async (connection) => {
      const state = await this.#locked(connection, key)
      const now = Date.now()
      const leases = Object.fromEntries(Object.entries(state.leases).filter(([, end]) => end > now))
      // Reserving the same ticket twice holds one slot.
      const reservation = Object.hasOwn(leases, ticket) ? { granted: true as const } : admit(state, Object.keys(leases).length, now, policy)
      if (reservation.granted) leases[ticket] = now + policy.leaseMs
      await this.#write(connection, key, {
        ...state,
        failures: liveFailures(state, now),
        leases,
        expiresAt: Math.max(state.expiresAt, state.forgetAt, reservation.granted ? now + policy.leaseMs : 0)
      })
      return reservation
    })
  }

  async settle (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy): Promise<number> {
    return await transaction(this.#pool, async (connection) => {
      const state = await this.#locked(connection, key)
      const now = Date.now()
      const { [ticket]: _settled, ...leases } = state.leases
      const counts = afterOutcome(state, outcome, now, policy)
      await this.#write(connection, key, { ...counts, leases, expiresAt: outcome === 'failure' ? Math.max(state.expiresAt, counts.forgetAt) : state.expiresAt })
      return outcome === 'failure' ? blockDuration(counts.failures, policy) : 0
    })
  }

  async clear (key: string): Promise<void> {
    await written(this.#pool, this.#sql.clear, [key])
  }

  async clearGroup (group: string): Promise<void> {
    await written(this.#pool, this.#sql.clearGroup, [group])
  }

  /** Deletes the rows with nothing left to count (no failures to remember, no open lease); resolves how many. */
  async prune (): Promise<number> {
    return await written(this.#pool, this.#sql.prune, [Date.now()])
  }
}
