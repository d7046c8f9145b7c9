import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type {
  NewSession, RotationResult, SessionEndReason, SessionInfo, SessionPolicy, SessionState, SessionStore, SessionTimes
} from '../types.js'
import { rotationResult, sessionInfo, sessionTimes } from '../sql/session-rows.js'
import { bool, num, placeholders, pruneNowAndThen, quoteIdentifier, quoteName, rows, TABLE_OPTIONS, transaction, written, type MysqlPool } from './sql.js'

export interface MysqlSessionStoreOptions {
  /** Your `mysql2/promise` Pool; the store never connects or ends it. */
  pool: MysqlPool
  /** Table name (default 'auth_sessions'), optionally `database.table`. */
  table?: string
  /** Rows of sessions past their limits are deleted at most this often, during a Login (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the sessions table: one row per session, the refresh-token generation but never a token; times in epoch ms. */
export function sessionsTableMysql (table = 'auth_sessions'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  id VARCHAR(255) NOT NULL PRIMARY KEY,
  account_id VARCHAR(255) NOT NULL,
  credential_version BIGINT NOT NULL,
  key_id VARCHAR(255) NOT NULL,
  generation BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT NOT NULL,
  authenticated_at BIGINT NOT NULL,
  rotated_at BIGINT NOT NULL,
  idle_until BIGINT NOT NULL,
  ends_at BIGINT NOT NULL,
  ended_reason VARCHAR(64) NULL,
  ip VARCHAR(255) NOT NULL,
  user_agent TEXT NOT NULL,
  mfa TINYINT(1) NOT NULL DEFAULT 0,
  amr VARCHAR(255) NULL,
  trusted_device TINYINT(1) NOT NULL DEFAULT 0,
  KEY ${quoteIdentifier('account_id_idx')} (account_id),
  KEY ${quoteIdentifier('idle_until_idx')} (idle_until),
  KEY ${quoteIdentifier('ends_at_idx')} (ends_at)
) ${TABLE_OPTIONS};`
}

const LIVE = 'ended_reason IS NULL AND idle_until > ? AND ends_at > ?'

function sessionStatements (name: string) {
  return {
    create: `INSERT INTO ${name} (id, account_id, credential_version, key_id, ip, user_agent, mfa, amr, trusted_device,
      created_at, last_used_at, authenticated_at, rotated_at, idle_until, ends_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    get: `SELECT account_id, credential_version, authenticated_at, mfa FROM ${name} WHERE id = ? AND ${LIVE}`,
    lock: `SELECT * FROM ${name} WHERE id = ? FOR UPDATE`,
    rotate: `UPDATE ${name} SET generation = generation + 1, key_id = ?, rotated_at = ?, last_used_at = ?, idle_until = ? WHERE id = ?`,
    end: `UPDATE ${name} SET ended_reason = ? WHERE id = ? AND ${LIVE}`,
    accountOf: `SELECT account_id FROM ${name} WHERE id = ?`,
    reauthenticate: `UPDATE ${name} SET authenticated_at = ?, mfa = mfa OR ?, amr = COALESCE(?, amr) WHERE id = ? AND ${LIVE}`,
    liveOf: `SELECT id FROM ${name} WHERE account_id = ? AND ${LIVE} FOR UPDATE`,
    allOf: `SELECT id, (${LIVE}) AS live FROM ${name} WHERE account_id = ? FOR UPDATE`,
    forget: `DELETE FROM ${name} WHERE account_id = ?`,
    list: `SELECT * FROM ${name} WHERE account_id = ? AND ${LIVE} ORDER BY created_at, id`,
    prune: `DELETE FROM ${name} WHERE idle_until <= ? OR ends_at <= ?`
  }
}

const OPTIONS: StoreOptionRules = { pool: 'mysql', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * Sessions in MySQL or MariaDB. A rotation locks the session's row (`SELECT … FOR UPDATE`) and decides in one
 * transaction, so of concurrent rotations of one generation exactly one rotates and the others see its result; an
 * end is one UPDATE whose condition is the session being live (one caller matches it). Time is this process's clock.
 */
export class MysqlSessionStore implements SessionStore {
  readonly #pool: MysqlPool
  readonly #name: string
  readonly #sql: ReturnType<typeof sessionStatements>
  readonly #pruneNowAndThen: () => void

  constructor (options: MysqlSessionStoreOptions) {
    checkStoreOptions('MysqlSessionStore', options, OPTIONS)
    const { pool, table = 'auth_sessions', pruneIntervalMs = 60_000 } = options
    this.#pool = pool
    this.#name = quoteName(table)
    this.#sql = sessionStatements(this.#name)
    this.#pruneNowAndThen = pruneNowAndThen(async () => await this.prune(), pruneIntervalMs)
  }

  async create (session: NewSession, policy: SessionPolicy): Promise<SessionTimes> {
    this.#pruneNowAndThen()
    const now = Date.now()
    const idleUntil = now + policy.idleMs
    const endsAt = now + policy.maxMs
    await written(this.#pool, this.#sql.create, [
      session.id, session.accountId, session.credentialVersion, session.keyId, session.ip, session.userAgent, session.mfa === true ? 1 : 0,
      session.amr?.join(' ') ?? null, session.trustedDevice === true ? 1 : 0, now, now, now, now, idleUntil, endsAt
    ])
    return sessionTimes({ created_at: now, idle_until: idleUntil, ends_at: endsAt }, now)
  }

  async get (sessionId: string): Promise<SessionState | null> {
    const now = Date.now()
    const [row] = await rows(this.#pool, this.#sql.get, [sessionId, now, now])
    if (row === undefined) return null
    return { accountId: row.account_id, credentialVersion: num(row.credential_version), authenticatedAt: num(row.authenticated_at), mfa: bool(row.mfa) }
  }

  async rotate (sessionId: string, generation: number, keyId: string, policy: SessionPolicy): Promise<RotationResult> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      const now = Date.now()
      const [row] = await rows(connection, sql.lock, [sessionId])
      if (row === undefined) return { outcome: 'unknown' }
      if (row.ended_reason !== null) return { outcome: 'ended' }
      if (num(row.ends_at) <= now) return { outcome: 'expired' }
      if (num(row.idle_until) <= now) return { outcome: 'idle' }
      const stored = num(row.generation)
      if (stored === generation) {
        const idleUntil = now + policy.idleMs
        await written(connection, sql.rotate, [keyId, now, now, idleUntil, sessionId])
        return rotationResult({ ...row, generation: stored + 1, key_id: keyId, rotated_at: now, last_used_at: now, idle_until: idleUntil }, 'rotated', now)
      }
      if (stored === generation + 1 && now - num(row.rotated_at) <= policy.graceMs) return rotationResult(row, 'grace', now)
      await written(connection, sql.end, ['refresh_token_reused', sessionId, now, now])
      return { outcome: 'reused', accountId: row.account_id }
    })
  }

  async reauthenticate (sessionId: string, mfa = false, amr?: string[]): Promise<number | null> {
    const now = Date.now()
    return await written(this.#pool, this.#sql.reauthenticate, [now, mfa ? 1 : 0, amr?.join(' ') ?? null, sessionId, now, now]) === 1 ? now : null
  }

  async end (sessionId: string, reason: SessionEndReason): Promise<string | null> {
    const now = Date.now()
    // The UPDATE's condition is the session being live: of concurrent ends one matches it. A row's account never changes.
    if (await written(this.#pool, this.#sql.end, [reason, sessionId, now, now]) !== 1) return null
    const [row] = await rows(this.#pool, this.#sql.accountOf, [sessionId])
    return row?.account_id ?? null
  }

  async endAll (accountId: string, reason: SessionEndReason): Promise<string[]> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      const now = Date.now()
      const ids = (await rows(connection, sql.liveOf, [accountId, now, now])).map((row) => row.id as string)
      if (ids.length > 0) await written(connection, `UPDATE ${this.#name} SET ended_reason = ? WHERE id IN ${placeholders(ids.length)}`, [reason, ...ids])
      return ids
    })
  }

  async forget (accountId: string): Promise<string[]> {
    const sql = this.#sql
    return await transaction(this.#pool, async (connection) => {
      const now = Date.now()
      const all = await rows(connection, sql.allOf, [now, now, accountId])
      await written(connection, sql.forget, [accountId])
      return all.flatMap((row) => bool(row.live) ? [row.id as string] : [])
    })
  }

  async list (accountId: string): Promise<SessionInfo[]> {
    const now = Date.now()
    return (await rows(this.#pool, this.#sql.list, [accountId, now, now])).map(sessionInfo)
  }

  /** Deletes the rows of sessions past their limits, ended or not; resolves how many. */
  async prune (): Promise<number> {
    const now = Date.now()
    return await written(this.#pool, this.#sql.prune, [now, now])
  }
}
