import { baseName, prepare, pruneNowAndThen, quoteName, type PostgresConnection, type Queryable, type Statement } from './sql.js'
import type {
  NewSession, RotationResult, SessionEndReason, SessionInfo, SessionPolicy, SessionState, SessionStore, SessionTimes
} from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface PostgresSessionStoreOptions extends PostgresConnection {
  /** Table name, optionally schema-qualified (default 'auth_sessions'). */
  table?: string
  /** Rows of sessions past their limits are deleted at most this often, in the background of a Login (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the sessions table: one row per session, the refresh-token generation but never a token. */
export function sessionsTableSql (table = 'auth_sessions'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  credential_version integer NOT NULL,
  key_id text NOT NULL,
  generation integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now(),
  authenticated_at timestamptz NOT NULL DEFAULT now(),
  rotated_at timestamptz NOT NULL DEFAULT now(),
  idle_until timestamptz NOT NULL,
  ends_at timestamptz NOT NULL,
  ended_reason text,
  ip text NOT NULL,
  user_agent text NOT NULL,
  mfa boolean NOT NULL DEFAULT false,
  amr text,
  trusted_device boolean NOT NULL DEFAULT false
);
ALTER TABLE ${name} ADD COLUMN IF NOT EXISTS authenticated_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE ${name} ADD COLUMN IF NOT EXISTS mfa boolean NOT NULL DEFAULT false;
ALTER TABLE ${name} ADD COLUMN IF NOT EXISTS amr text;
ALTER TABLE ${name} ADD COLUMN IF NOT EXISTS trusted_device boolean NOT NULL DEFAULT false;
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_account_id_idx`)} ON ${name} (account_id);
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_expiry_idx`)} ON ${name} (LEAST(idle_until, ends_at));`
}

const ms = (column: string): string => `(extract(epoch from ${column}) * 1000)::float8`
const LIVE = 'ended_reason IS NULL AND idle_until > now() AND ends_at > now()'
const TIMES = `${ms('created_at')} AS "createdAt", ${ms('LEAST(idle_until, ends_at) - now()')} AS "expiresInMs", ${ms('ends_at - now()')} AS "remainingMs"`
const AUTHENTICATED_AT = 'floor(extract(epoch from authenticated_at) * 1000)::float8 AS "authenticatedAt"'
const CURRENT = `generation, key_id AS "keyId", account_id AS "accountId", credential_version AS "credentialVersion", ${AUTHENTICATED_AT}, mfa, amr,
  trusted_device AS "trustedDevice", ${TIMES}`
const INTERVAL = "$1::float8 * interval '1 millisecond'"

type Row = Record<string, unknown>

function times (row: Row): SessionTimes {
  return { createdAt: Math.floor(Number(row.createdAt)), expiresInMs: Math.floor(Number(row.expiresInMs)), remainingMs: Math.floor(Number(row.remainingMs)) }
}

function current (row: Row, outcome: 'rotated' | 'grace'): RotationResult {
  return {
    outcome,
    generation: Number(row.generation),
    keyId: String(row.keyId),
    accountId: String(row.accountId),
    credentialVersion: Number(row.credentialVersion),
    authenticatedAt: Number(row.authenticatedAt),
    mfa: row.mfa === true,
    trustedDevice: row.trustedDevice === true,
    ...times(row),
    ...typeof row.amr === 'string' && row.amr !== '' ? { amr: row.amr.split(' ') } : {}
  }
}

const OPTIONS: StoreOptionRules = { pool: 'pool', preparedStatements: 'boolean', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * Sessions in PostgreSQL, for deployments without Redis. Every decision is one statement on the
 * session's row, with the database's clock; concurrent rotations of one generation are serialised by
 * the row lock, so exactly one rotates and the others see its result.
 */
export class PostgresSessionStore implements SessionStore {
  readonly #pool: Queryable
  readonly #pruneNowAndThen: () => void
  readonly #sql: Record<'create' | 'get' | 'rotate' | 'state' | 'reuse' | 'reauthenticate' | 'end' | 'endAll' | 'forget' | 'list' | 'prune', Statement>

  constructor (options: PostgresSessionStoreOptions) {
    checkStoreOptions('PostgresSessionStore', options, OPTIONS)
    const { pool, preparedStatements = true, table = 'auth_sessions', pruneIntervalMs = 60_000 } = options
    const name = quoteName(table)
    this.#pool = pool
    this.#pruneNowAndThen = pruneNowAndThen(async () => await this.prune(), pruneIntervalMs)
    this.#sql = prepare({
      create: `INSERT INTO ${name} (id, account_id, credential_version, key_id, ip, user_agent, mfa, amr, trusted_device, idle_until, ends_at)
        VALUES ($3, $4, $5, $6, $7, $8, $9, $10, $11, now() + ${INTERVAL}, now() + $2::float8 * interval '1 millisecond') RETURNING ${TIMES}`,
      get: `SELECT account_id AS "accountId", credential_version AS "credentialVersion", ${AUTHENTICATED_AT}, mfa FROM ${name} WHERE id = $1 AND ${LIVE}`,
      rotate: `UPDATE ${name} SET generation = generation + 1, key_id = $3, rotated_at = now(), last_used_at = now(),
        idle_until = now() + $4::float8 * interval '1 millisecond'
        WHERE id = $1 AND generation = $2 AND ${LIVE} RETURNING ${CURRENT}`,
      state: `SELECT ${CURRENT}, ended_reason AS "endedReason", ends_at <= now() AS expired, idle_until <= now() AS idle,
        now() - rotated_at <= ${INTERVAL.replace('$1', '$2')} AS "inGrace" FROM ${name} WHERE id = $1`,
      reuse: `UPDATE ${name} SET ended_reason = 'refresh_token_reused' WHERE id = $1 AND ${LIVE} RETURNING account_id AS "accountId"`,
      reauthenticate: `UPDATE ${name} SET authenticated_at = now(), mfa = mfa OR $2, amr = coalesce($3, amr) WHERE id = $1 AND ${LIVE} RETURNING ${AUTHENTICATED_AT}`,
      end: `UPDATE ${name} SET ended_reason = $2 WHERE id = $1 AND ${LIVE} RETURNING account_id AS "accountId"`,
      endAll: `UPDATE ${name} SET ended_reason = $2 WHERE account_id = $1 AND ${LIVE} RETURNING id`,
      forget: `DELETE FROM ${name} WHERE account_id = $1 RETURNING id, ${LIVE} AS live`,
      list: `SELECT id, account_id AS "accountId", ${ms('created_at')} AS "createdAt", ${ms('last_used_at')} AS "lastUsedAt",
        ${AUTHENTICATED_AT}, ${ms('LEAST(idle_until, ends_at)')} AS "expiresAt", ip, user_agent AS "userAgent", trusted_device AS "trustedDevice"
        FROM ${name} WHERE account_id = $1 AND ${LIVE} ORDER BY created_at, id`,
      prune: `DELETE FROM ${name} WHERE LEAST(idle_until, ends_at) <= now()`
    }, preparedStatements)
  }

  async create (session: NewSession, policy: SessionPolicy): Promise<SessionTimes> {
    this.#pruneNowAndThen()
    const { rows } = await this.#pool.query({
      ...this.#sql.create,
      values: [policy.idleMs, policy.maxMs, session.id, session.accountId, session.credentialVersion, session.keyId, session.ip, session.userAgent, session.mfa === true,
        session.amr?.join(' ') ?? null, session.trustedDevice === true]
    })
    return times(rows[0])
  }

  async get (sessionId: string): Promise<SessionState | null> {
    // Every authenticated request: no spread, which with a property after it is V8's slow path on Node 20.
    const { name, text } = this.#sql.get
    const { rows } = await this.#pool.query({ name, text, values: [sessionId] })
    return rows[0] ?? null
  }

  async rotate (sessionId: string, generation: number, keyId: string, policy: SessionPolicy): Promise<RotationResult> {
    const rotated = await this.#pool.query({ ...this.#sql.rotate, values: [sessionId, generation, keyId, policy.idleMs] })
    if (rotated.rows[0] !== undefined) return current(rotated.rows[0], 'rotated')
    // Not the current generation (or not live). A concurrent rotation that won has committed by now: the
    // UPDATE above waited for its row lock, and this statement sees what it wrote.
    const { rows: [state] } = await this.#pool.query({ ...this.#sql.state, values: [sessionId, policy.graceMs] })
    if (state === undefined) return { outcome: 'unknown' }
    if (state.endedReason !== null) return { outcome: 'ended' }
    if (state.expired === true) return { outcome: 'expired' }
    if (state.idle === true) return { outcome: 'idle' }
    if (Number(state.generation) === generation + 1 && state.inGrace === true) return current(state, 'grace')
    const { rows: [ended] } = await this.#pool.query({ ...this.#sql.reuse, values: [sessionId] })
    return ended === undefined ? { outcome: 'ended' } : { outcome: 'reused', accountId: ended.accountId }
  }

  async reauthenticate (sessionId: string, mfa = false, amr?: string[]): Promise<number | null> {
    const { rows } = await this.#pool.query({ ...this.#sql.reauthenticate, values: [sessionId, mfa, amr?.join(' ') ?? null] })
    return rows[0] === undefined ? null : Number(rows[0].authenticatedAt)
  }

  async end (sessionId: string, reason: SessionEndReason): Promise<string | null> {
    const { rows } = await this.#pool.query({ ...this.#sql.end, values: [sessionId, reason] })
    return rows[0]?.accountId ?? null
  }

  async endAll (accountId: string, reason: SessionEndReason): Promise<string[]> {
    const { rows } = await this.#pool.query({ ...this.#sql.endAll, values: [accountId, reason] })
    return rows.map((row: Row) => String(row.id))
  }

  async forget (accountId: string): Promise<string[]> {
    const { rows } = await this.#pool.query({ ...this.#sql.forget, values: [accountId] })
    return rows.flatMap((row: Row) => row.live === true ? [String(row.id)] : [])
  }

  async list (accountId: string): Promise<SessionInfo[]> {
    const { rows } = await this.#pool.query({ ...this.#sql.list, values: [accountId] })
    return rows.map((row: Row) => ({
      id: String(row.id),
      accountId: String(row.accountId),
      createdAt: Math.floor(Number(row.createdAt)),
      lastUsedAt: Math.floor(Number(row.lastUsedAt)),
      authenticatedAt: Number(row.authenticatedAt),
      expiresAt: Math.floor(Number(row.expiresAt)),
      ip: String(row.ip),
      userAgent: String(row.userAgent),
      trustedDevice: row.trustedDevice === true
    }))
  }

  /** Deletes the rows of sessions past their limits, ended or not; resolves how many. */
  async prune (): Promise<number> {
    const { rowCount } = await this.#pool.query({ ...this.#sql.prune })
    return rowCount ?? 0
  }
}
