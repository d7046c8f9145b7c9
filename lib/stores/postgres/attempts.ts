import { baseName, prepare, pruneNowAndThen, quoteName, siblingName, type PostgresConnection, type Queryable, type Statement } from './sql.js'
import { inFlightRetryMs } from '../attempt-rules.js'
import type { AttemptOutcome, AttemptStore, Reservation, ThrottlePolicy } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface PostgresAttemptStoreOptions extends PostgresConnection {
  /** Table name, optionally schema-qualified (default 'auth_attempts'). */
  table?: string
  /** Rows with nothing left to count are deleted at most this often, in the background of a reservation (default 60000 ms). */
  pruneIntervalMs?: number
}

/**
 * The DDL of the attempts table and its two functions. One row per key (an HMAC of an e-mail, or
 * `device.<id>`): the counts of lib/stores/attempt-rules.ts and the open reservations (ticket → lease end),
 * times in epoch ms of the database's clock. reserve and settle each lock the key's row and mirror
 * admit and afterOutcome line for line (test/integration/throttle/throttle-rules.test.ts compares them).
 */
export function attemptsTableSql (table = 'auth_attempts'): string {
  const name = quoteName(table)
  const reserve = siblingName(table, 'reserve')
  const settle = siblingName(table, 'settle')
  const now = 'extract(epoch from clock_timestamp()) * 1000'
  return `CREATE TABLE IF NOT EXISTS ${name} (
  key text PRIMARY KEY,
  failures integer NOT NULL DEFAULT 0,
  blocked_until float8 NOT NULL DEFAULT 0,
  forget_at float8 NOT NULL DEFAULT 0,
  leases jsonb NOT NULL DEFAULT '{}',
  expires_at float8 NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_expires_idx`)} ON ${name} (expires_at);
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_group_idx`)} ON ${name} (split_part(key, '/', 1)) WHERE strpos(key, '/') > 0;
CREATE OR REPLACE FUNCTION ${reserve}(p_key text, p_ticket text, p_free integer, p_lease float8, p_in_flight_retry float8)
RETURNS float8 LANGUAGE plpgsql AS $reserve$
DECLARE
  now_ms float8 := ${now};
  state ${name}%ROWTYPE;
  v_leases jsonb;
  v_failures integer;
  wait float8 := 0;
BEGIN
  INSERT INTO ${name} (key) VALUES (p_key) ON CONFLICT (key) DO NOTHING;
  SELECT * INTO state FROM ${name} WHERE key = p_key FOR UPDATE;
  SELECT coalesce(jsonb_object_agg(lease.ticket, lease.lease_end), '{}') INTO v_leases
    FROM jsonb_each(state.leases) AS lease(ticket, lease_end) WHERE lease.lease_end::float8 > now_ms;
  v_failures := CASE WHEN state.failures > 0 AND now_ms >= state.forget_at THEN 0 ELSE state.failures END;
  IF NOT v_leases ? p_ticket THEN
    IF state.blocked_until > now_ms THEN
      wait := state.blocked_until - now_ms;
    ELSIF (SELECT count(*) FROM jsonb_object_keys(v_leases)) >= greatest(1, p_free - v_failures) THEN
      wait := p_in_flight_retry;
    END IF;
  END IF;
  IF wait = 0 THEN v_leases := v_leases || jsonb_build_object(p_ticket, now_ms + p_lease); END IF;
  UPDATE ${name} SET leases = v_leases, failures = v_failures,
    expires_at = greatest(state.expires_at, state.forget_at, CASE WHEN wait = 0 THEN now_ms + p_lease ELSE 0 END)
  WHERE key = p_key;
  RETURN wait;
END
$reserve$;
CREATE OR REPLACE FUNCTION ${settle}(p_key text, p_ticket text, p_outcome text, p_free integer, p_block float8, p_max_block float8, p_forget_after float8)
RETURNS float8 LANGUAGE plpgsql AS $settle$
DECLARE
  now_ms float8 := ${now};
  state ${name}%ROWTYPE;
  v_failures integer;
  v_blocked_until float8;
  block float8 := 0;
BEGIN
  IF p_outcome = 'failure' THEN INSERT INTO ${name} (key) VALUES (p_key) ON CONFLICT (key) DO NOTHING; END IF;
  SELECT * INTO state FROM ${name} WHERE key = p_key FOR UPDATE;
  IF NOT FOUND THEN RETURN 0; END IF;
  IF p_outcome = 'success' THEN
    UPDATE ${name} SET leases = leases - p_ticket, failures = 0, blocked_until = 0, forget_at = 0 WHERE key = p_key;
  ELSIF p_outcome = 'cancel' THEN
    UPDATE ${name} SET leases = leases - p_ticket WHERE key = p_key;
  ELSE
    v_failures := CASE WHEN state.failures > 0 AND now_ms >= state.forget_at THEN 0 ELSE state.failures END + 1;
    v_blocked_until := state.blocked_until;
    IF v_failures >= p_free THEN
      block := CASE WHEN v_failures - p_free >= 31 THEN p_max_block ELSE least(p_block * 2 ^ (v_failures - p_free), p_max_block) END;
      v_blocked_until := now_ms + block;
    END IF;
    UPDATE ${name} SET leases = leases - p_ticket, failures = v_failures, blocked_until = v_blocked_until,
      forget_at = greatest(v_blocked_until, now_ms) + p_forget_after,
      expires_at = greatest(state.expires_at, greatest(v_blocked_until, now_ms) + p_forget_after)
    WHERE key = p_key;
  END IF;
  RETURN block;
END
$settle$;`
}

const OPTIONS: StoreOptionRules = { pool: 'pool', preparedStatements: 'boolean', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * Attempt counters (per e-mail and per known device) in PostgreSQL, for deployments without Redis, so
 * that every instance shares them. Each operation is one statement calling a function that locks the
 * key's row: concurrent reservations of one key are serialised, and only the free ones are granted.
 */
export class PostgresAttemptStore implements AttemptStore {
  readonly #pool: Queryable
  readonly #pruneNowAndThen: () => void
  readonly #sql: Record<'reserve' | 'settle' | 'clear' | 'clearGroup' | 'prune', Statement>

  constructor (options: PostgresAttemptStoreOptions) {
    checkStoreOptions('PostgresAttemptStore', options, OPTIONS)
    const { pool, preparedStatements = true, table = 'auth_attempts', pruneIntervalMs = 60_000 } = options
    this.#pool = pool
    this.#pruneNowAndThen = pruneNowAndThen(async () => await this.prune(), pruneIntervalMs)
    this.#sql = prepare({
      reserve: `SELECT ${siblingName(table, 'reserve')}($1, $2, $3, $4, $5) AS wait`,
      settle: `SELECT ${siblingName(table, 'settle')}($1, $2, $3, $4, $5, $6, $7) AS block`,
      clear: `DELETE FROM ${quoteName(table)} WHERE key = $1`,
      clearGroup: `DELETE FROM ${quoteName(table)} WHERE strpos(key, '/') > 0 AND split_part(key, '/', 1) = $1`,
      prune: `DELETE FROM ${quoteName(table)} WHERE expires_at < extract(epoch from clock_timestamp()) * 1000`
    }, preparedStatements)
  }

  async reserve (key: string, ticket: string, policy: ThrottlePolicy): Promise<Reservation> {
    this.#pruneNowAndThen()
    const { rows } = await this.#pool.query({ ...this.#sql.reserve, values: [key, ticket, policy.freeFailures, policy.leaseMs, inFlightRetryMs(policy)] })
    const wait = Math.ceil(Number(rows[0].wait))
    return wait === 0 ? { granted: true } : { granted: false, retryAfterMs: Math.max(1, wait) }
  }

  async settle (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy): Promise<number> {
    const { rows } = await this.#pool.query({
      ...this.#sql.settle,
      values: [key, ticket, outcome, policy.freeFailures, policy.blockMs, policy.maxBlockMs, policy.forgetAfterMs]
    })
    return Number(rows[0].block)
  }

  async clear (key: string): Promise<void> {
    await this.#pool.query({ ...this.#sql.clear, values: [key] })
  }

  async clearGroup (group: string): Promise<void> {
    await this.#pool.query({ ...this.#sql.clearGroup, values: [group] })
  }

  /** Deletes the rows with nothing left to count (no failures to remember, no open lease); resolves how many. */
  async prune (): Promise<number> {
    const { rowCount } = await this.#pool.query({ ...this.#sql.prune })
    return rowCount ?? 0
  }
}
