import { admit, afterOutcome, blockDuration, liveFailures, type AttemptCounts } from '../attempt-rules.js'
import { markProcessLocal } from '../process-local.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { AttemptOutcome, AttemptStore, Reservation, ThrottlePolicy } from '../types.js'
import { immediate, one, prepareAll, pruneNowAndThen, quoteName, type Prepared, type SqliteDatabase } from './sql.js'

export interface SqliteAttemptStoreOptions {
  /** Your `better-sqlite3` Database; the store never opens or closes it. */
  database: SqliteDatabase
  /** Table name (default 'auth_attempts'). */
  table?: string
  /** Rows with nothing left to count are deleted at most this often, during a reservation (default 60000 ms). */
  pruneIntervalMs?: number
}

/**
 * The DDL of the attempts table: one row per key (an HMAC of an e-mail, or `device.<id>`), the counts of
 * lib/stores/attempt-rules.ts and the open reservations as JSON (ticket → lease end), times in epoch ms.
 */
export function attemptsTableSqlite (table = 'auth_attempts'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  key TEXT PRIMARY KEY,
  failures INTEGER NOT NULL DEFAULT 0,
  blocked_until INTEGER NOT NULL DEFAULT 0,
  forget_at INTEGER NOT NULL DEFAULT 0,
  leases TEXT NOT NULL DEFAULT '{}',
  expires_at INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_expires_idx`)} ON ${name} (expires_at);
CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_group_idx`)} ON ${name} (substr(key, 1, instr(key, '/') - 1)) WHERE instr(key, '/') > 0;`
}

function attemptStatements (name: string) {
  return {
    row: `SELECT failures, blocked_until AS blockedUntil, forget_at AS forgetAt, leases, expires_at AS expiresAt FROM ${name} WHERE key = @key`,
    write: `INSERT INTO ${name} (key, failures, blocked_until, forget_at, leases, expires_at) VALUES (@key, @failures, @blockedUntil, @forgetAt, @leases, @expiresAt)
      ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, blocked_until = excluded.blocked_until, forget_at = excluded.forget_at,
        leases = excluded.leases, expires_at = excluded.expires_at`,
    clear: `DELETE FROM ${name} WHERE key = @key`,
    clearGroup: `DELETE FROM ${name} WHERE instr(key, '/') > 0 AND substr(key, 1, instr(key, '/') - 1) = @group`,
    prune: `DELETE FROM ${name} WHERE expires_at < @now`
  }
}

interface State extends AttemptCounts {
  /** Open reservations: ticket → the end of its lease (epoch ms). */
  leases: Record<string, number>
  /** When the row has nothing left to count. */
  expiresAt: number
}

const OPTIONS: StoreOptionRules = { database: 'database', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * Attempt counters (per e-mail and per known device) in SQLite. reserve and settle each read the key's row, apply
 * the rules of lib/stores/attempt-rules.ts (admit, afterOutcome: the functions the memory store runs, which the
 * PostgreSQL functions and the Redis scripts mirror) and write it back in one `BEGIN IMMEDIATE` transaction, so
 * concurrent reservations of one key, from this process or another connection, are serialised.
 */
export class SqliteAttemptStore implements AttemptStore {
  readonly #sql: Prepared<typeof attemptStatements>
  readonly #reserve: (key: string, ticket: string, policy: ThrottlePolicy) => Reservation
  readonly #settle: (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy) => number
  readonly #pruneNowAndThen: () => void

  constructor (options: SqliteAttemptStoreOptions) {
    checkStoreOptions('SqliteAttemptStore', options, OPTIONS)
    markProcessLocal(this)
    const { database, table = 'auth_attempts', pruneIntervalMs = 60_000 } = options
    const sql = this.#sql = prepareAll('SqliteAttemptStore', database, attemptStatements(quoteName(table)))
    this.#pruneNowAndThen = pruneNowAndThen(() => this.#prune(), pruneIntervalMs)
    const read = (key: string): State | undefined => {
      const row = one(sql.row, { key })
      return row === undefined ? undefined : { ...row, leases: JSON.parse(row.leases) } as State
    }
    const write = (key: string, state: State): void => { sql.write.run({ key, ...state, leases: JSON.stringify(state.leases) }) }
    this.#reserve = immediate(database, (key: string, ticket: string, policy: ThrottlePolicy): Reservation => {
      const now = Date.now()
      const state = read(key) ?? { failures: 0, blockedUntil: 0, forgetAt: 0, leases: {}, expiresAt: 0 }
      const leases = Object.fromEntries(Object.entries(state.leases).filter(([, end]) => end > now))
      // Reserving the same ticket twice holds one slot.
      const reservation = Object.hasOwn(leases, ticket) ? { granted: true as const } : admit(state, Object.keys(leases).length, now, policy)
      if (reservation.granted) leases[ticket] = now + policy.leaseMs
      write(key, {
        ...state,
        failures: liveFailures(state, now),
        leases,
        expiresAt: Math.max(state.expiresAt, state.forgetAt, reservation.granted ? now + policy.leaseMs : 0)
      })
      return reservation
    })
    this.#settle = immediate(database, (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy): number => {
      const now = Date.now()
      const state = read(key) ?? (outcome === 'failure' ? { failures: 0, blockedUntil: 0, forgetAt: 0, leases: {}, expiresAt: 0 } : undefined)
      if (state === undefined) return 0
      const { [ticket]: _settled, ...leases } = state.leases
      const counts = afterOutcome(state, outcome, now, policy)
      write(key, { ...counts, leases, expiresAt: outcome === 'failure' ? Math.max(state.expiresAt, counts.forgetAt) : state.expiresAt })
      return outcome === 'failure' ? blockDuration(counts.failures, policy) : 0
    })
  }

  async reserve (key: string, ticket: string, policy: ThrottlePolicy): Promise<Reservation> {
    this.#pruneNowAndThen()
    return this.#reserve(key, ticket, policy)
  }

  async settle (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy): Promise<number> {
    return this.#settle(key, ticket, outcome, policy)
  }

  async clear (key: string): Promise<void> {
    this.#sql.clear.run({ key })
  }

  async clearGroup (group: string): Promise<void> {
    this.#sql.clearGroup.run({ group })
  }

  /** Deletes the rows with nothing left to count (no failures to remember, no open lease); resolves how many. */
  async prune (): Promise<number> {
    return this.#prune()
  }

  #prune (): number {
    return this.#sql.prune.run({ now: Date.now() }).changes
  }
}
