import { markProcessLocal } from '../process-local.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type {
  NewSession, RotationResult, SessionEndReason, SessionInfo, SessionPolicy, SessionState, SessionStore, SessionTimes
} from '../types.js'
import { rotationResult, sessionInfo, sessionTimes } from '../sql/session-rows.js'
import { bit, immediate, many, one, prepareAll, pruneNowAndThen, quoteName, type Prepared, type SqliteDatabase } from './sql.js'

export interface SqliteSessionStoreOptions {
  /** Your `better-sqlite3` Database; the store never opens or closes it. */
  database: SqliteDatabase
  /** Table name (default 'auth_sessions'). */
  table?: string
  /** Rows of sessions past their limits are deleted at most this often, during a Login (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the sessions table: one row per session, the refresh-token generation but never a token; times in epoch ms. */
export function sessionsTableSqlite (table = 'auth_sessions'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  credential_version INTEGER NOT NULL,
  key_id TEXT NOT NULL,
  generation INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  authenticated_at INTEGER NOT NULL,
  rotated_at INTEGER NOT NULL,
  idle_until INTEGER NOT NULL,
  ends_at INTEGER NOT NULL,
  ended_reason TEXT,
  ip TEXT NOT NULL,
  user_agent TEXT NOT NULL,
  mfa INTEGER NOT NULL DEFAULT 0,
  amr TEXT,
  trusted_device INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_account_id_idx`)} ON ${name} (account_id);
CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_expiry_idx`)} ON ${name} (min(idle_until, ends_at));`
}

const LIVE = 'ended_reason IS NULL AND idle_until > @now AND ends_at > @now'

function sessionStatements (name: string) {
  return {
    create: `INSERT INTO ${name} (id, account_id, credential_version, key_id, ip, user_agent, mfa, amr, trusted_device,
      created_at, last_used_at, authenticated_at, rotated_at, idle_until, ends_at)
      VALUES (@id, @accountId, @credentialVersion, @keyId, @ip, @userAgent, @mfa, @amr, @trustedDevice, @now, @now, @now, @now, @idleUntil, @endsAt)`,
    get: `SELECT account_id AS accountId, credential_version AS credentialVersion, authenticated_at AS authenticatedAt, mfa FROM ${name} WHERE id = @id AND ${LIVE}`,
    row: `SELECT * FROM ${name} WHERE id = @id`,
    rotate: `UPDATE ${name} SET generation = generation + 1, key_id = @keyId, rotated_at = @now, last_used_at = @now, idle_until = @idleUntil
      WHERE id = @id RETURNING *`,
    end: `UPDATE ${name} SET ended_reason = @reason WHERE id = @id AND ${LIVE} RETURNING account_id AS accountId`,
    reauthenticate: `UPDATE ${name} SET authenticated_at = @now, mfa = mfa OR @mfa, amr = coalesce(@amr, amr) WHERE id = @id AND ${LIVE}`,
    endAll: `UPDATE ${name} SET ended_reason = @reason WHERE account_id = @accountId AND ${LIVE} RETURNING id`,
    forget: `DELETE FROM ${name} WHERE account_id = @accountId RETURNING id, ${LIVE} AS live`,
    list: `SELECT * FROM ${name} WHERE account_id = @accountId AND ${LIVE} ORDER BY created_at, id`,
    prune: `DELETE FROM ${name} WHERE min(idle_until, ends_at) <= @now`
  }
}

const OPTIONS: StoreOptionRules = { database: 'database', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * Sessions in SQLite. A rotation reads and writes the session's row in one `BEGIN IMMEDIATE` transaction, so of
 * concurrent rotations of one generation (in this process or on another connection) exactly one rotates and the
 * others see its result; every other method is one statement. Time is this process's clock.
 */
export class SqliteSessionStore implements SessionStore {
  readonly #sql: Prepared<typeof sessionStatements>
  readonly #rotate: (sessionId: string, generation: number, keyId: string, policy: SessionPolicy) => RotationResult
  readonly #pruneNowAndThen: () => void

  constructor (options: SqliteSessionStoreOptions) {
    checkStoreOptions('SqliteSessionStore', options, OPTIONS)
    markProcessLocal(this)
    const { database, table = 'auth_sessions', pruneIntervalMs = 60_000 } = options
    const name = quoteName(table)
    const sql = this.#sql = prepareAll('SqliteSessionStore', database, sessionStatements(name))
    this.#pruneNowAndThen = pruneNowAndThen(() => this.#prune(), pruneIntervalMs)
    this.#rotate = immediate(database, (id: string, generation: number, keyId: string, policy: SessionPolicy): RotationResult => {
      const now = Date.now()
      const row = one(sql.row, { id })
      if (row === undefined) return { outcome: 'unknown' }
      if (row.ended_reason !== null) return { outcome: 'ended' }
      if (row.ends_at <= now) return { outcome: 'expired' }
      if (row.idle_until <= now) return { outcome: 'idle' }
      if (row.generation === generation) return rotationResult(one(sql.rotate, { id, keyId, now, idleUntil: now + policy.idleMs })!, 'rotated', now)
      if (row.generation === generation + 1 && now - row.rotated_at <= policy.graceMs) return rotationResult(row, 'grace', now)
      const ended = one(sql.end, { id, now, reason: 'refresh_token_reused' })
      return ended === undefined ? { outcome: 'ended' } : { outcome: 'reused', accountId: ended.accountId }
    })
  }

  async create (session: NewSession, policy: SessionPolicy): Promise<SessionTimes> {
    this.#pruneNowAndThen()
    const now = Date.now()
    const row = {
      id: session.id,
      accountId: session.accountId,
      credentialVersion: session.credentialVersion,
      keyId: session.keyId,
      ip: session.ip,
      userAgent: session.userAgent,
      mfa: bit(session.mfa),
      amr: session.amr?.join(' ') ?? null,
      trustedDevice: bit(session.trustedDevice),
      now,
      idleUntil: now + policy.idleMs,
      endsAt: now + policy.maxMs
    }
    this.#sql.create.run(row)
    return sessionTimes({ created_at: now, idle_until: row.idleUntil, ends_at: row.endsAt }, now)
  }

  async get (sessionId: string): Promise<SessionState | null> {
    const row = one(this.#sql.get, { id: sessionId, now: Date.now() })
    if (row === undefined) return null
    row.mfa = row.mfa === 1
    return row as SessionState
  }

  async rotate (sessionId: string, generation: number, keyId: string, policy: SessionPolicy): Promise<RotationResult> {
    return this.#rotate(sessionId, generation, keyId, policy)
  }

  async reauthenticate (sessionId: string, mfa = false, amr?: string[]): Promise<number | null> {
    const now = Date.now()
    return this.#sql.reauthenticate.run({ id: sessionId, now, mfa: bit(mfa), amr: amr?.join(' ') ?? null }).changes === 1 ? now : null
  }

  async end (sessionId: string, reason: SessionEndReason): Promise<string | null> {
    return one(this.#sql.end, { id: sessionId, reason, now: Date.now() })?.accountId ?? null
  }

  async endAll (accountId: string, reason: SessionEndReason): Promise<string[]> {
    return many(this.#sql.endAll, { accountId, reason, now: Date.now() }).map((row) => row.id)
  }

  async forget (accountId: string): Promise<string[]> {
    return many(this.#sql.forget, { accountId, now: Date.now() }).flatMap((row) => row.live === 1 ? [row.id] : [])
  }

  async list (accountId: string): Promise<SessionInfo[]> {
    return many(this.#sql.list, { accountId, now: Date.now() }).map(sessionInfo)
  }

  /** Deletes the rows of sessions past their limits, ended or not; resolves how many. */
  async prune (): Promise<number> {
    return this.#prune()
  }

  #prune (): number {
    return this.#sql.prune.run({ now: Date.now() }).changes
  }
}
