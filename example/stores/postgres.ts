// Accounts and second factors (and, without Redis, sessions, attempt counters and one-time tokens) in PostgreSQL. The tables are created at
// start if missing (the DDL of accountsTableSql(), sessionsTableSql(), attemptsTableSql(), oneTimeTokensTableSql(), mfaTableSql() and trustedDevicesTableSql();
// test/docs/postgres-docs.test.ts keeps this copy equal):
//
// postgres-schema:begin
//   CREATE TABLE IF NOT EXISTS "auth_accounts" (
//     id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
//     email text NOT NULL,
//     password_hash text NOT NULL,
//     active boolean NOT NULL DEFAULT true,
//     credential_version integer NOT NULL DEFAULT 0,
//     created_at timestamptz NOT NULL DEFAULT now()
//   );
//   CREATE UNIQUE INDEX IF NOT EXISTS "auth_accounts_email_key" ON "auth_accounts" (lower(email));
//   CREATE OR REPLACE FUNCTION "auth_accounts_on_deactivate"() RETURNS trigger LANGUAGE plpgsql AS $trigger$
//   BEGIN
//     IF OLD."active" IS TRUE AND NEW."active" IS NOT TRUE AND NEW."credential_version" = OLD."credential_version" THEN
//       NEW."credential_version" := OLD."credential_version" + 1;
//     END IF;
//     RETURN NEW;
//   END
//   $trigger$;
//   CREATE OR REPLACE TRIGGER "auth_accounts_on_deactivate" BEFORE UPDATE OF "active" ON "auth_accounts"
//     FOR EACH ROW EXECUTE FUNCTION "auth_accounts_on_deactivate"();
//   CREATE TABLE IF NOT EXISTS "auth_sessions" (
//     id text PRIMARY KEY,
//     account_id text NOT NULL,
//     credential_version integer NOT NULL,
//     key_id text NOT NULL,
//     generation integer NOT NULL DEFAULT 0,
//     created_at timestamptz NOT NULL DEFAULT now(),
//     last_used_at timestamptz NOT NULL DEFAULT now(),
//     authenticated_at timestamptz NOT NULL DEFAULT now(),
//     rotated_at timestamptz NOT NULL DEFAULT now(),
//     idle_until timestamptz NOT NULL,
//     ends_at timestamptz NOT NULL,
//     ended_reason text,
//     ip text NOT NULL,
//     user_agent text NOT NULL,
//     mfa boolean NOT NULL DEFAULT false,
//     amr text,
//     trusted_device boolean NOT NULL DEFAULT false
//   );
//   ALTER TABLE "auth_sessions" ADD COLUMN IF NOT EXISTS authenticated_at timestamptz NOT NULL DEFAULT now();
//   ALTER TABLE "auth_sessions" ADD COLUMN IF NOT EXISTS mfa boolean NOT NULL DEFAULT false;
//   ALTER TABLE "auth_sessions" ADD COLUMN IF NOT EXISTS amr text;
//   ALTER TABLE "auth_sessions" ADD COLUMN IF NOT EXISTS trusted_device boolean NOT NULL DEFAULT false;
//   CREATE INDEX IF NOT EXISTS "auth_sessions_account_id_idx" ON "auth_sessions" (account_id);
//   CREATE INDEX IF NOT EXISTS "auth_sessions_expiry_idx" ON "auth_sessions" (LEAST(idle_until, ends_at));
//   CREATE TABLE IF NOT EXISTS "auth_attempts" (
//     key text PRIMARY KEY,
//     failures integer NOT NULL DEFAULT 0,
//     blocked_until float8 NOT NULL DEFAULT 0,
//     forget_at float8 NOT NULL DEFAULT 0,
//     leases jsonb NOT NULL DEFAULT '{}',
//     expires_at float8 NOT NULL DEFAULT 0
//   );
//   CREATE INDEX IF NOT EXISTS "auth_attempts_expires_idx" ON "auth_attempts" (expires_at);
//   CREATE INDEX IF NOT EXISTS "auth_attempts_group_idx" ON "auth_attempts" (split_part(key, '/', 1)) WHERE strpos(key, '/') > 0;
//   CREATE OR REPLACE FUNCTION "auth_attempts_reserve"(p_key text, p_ticket text, p_free integer, p_lease float8, p_in_flight_retry float8)
//   RETURNS float8 LANGUAGE plpgsql AS $reserve$
//   DECLARE
//     now_ms float8 := extract(epoch from clock_timestamp()) * 1000;
//     state "auth_attempts"%ROWTYPE;
//     v_leases jsonb;
//     v_failures integer;
//     wait float8 := 0;
//   BEGIN
//     INSERT INTO "auth_attempts" (key) VALUES (p_key) ON CONFLICT (key) DO NOTHING;
//     SELECT * INTO state FROM "auth_attempts" WHERE key = p_key FOR UPDATE;
//     SELECT coalesce(jsonb_object_agg(lease.ticket, lease.lease_end), '{}') INTO v_leases
//       FROM jsonb_each(state.leases) AS lease(ticket, lease_end) WHERE lease.lease_end::float8 > now_ms;
//     v_failures := CASE WHEN state.failures > 0 AND now_ms >= state.forget_at THEN 0 ELSE state.failures END;
//     IF NOT v_leases ? p_ticket THEN
//       IF state.blocked_until > now_ms THEN
//         wait := state.blocked_until - now_ms;
//       ELSIF (SELECT count(*) FROM jsonb_object_keys(v_leases)) >= greatest(1, p_free - v_failures) THEN
//         wait := p_in_flight_retry;
//       END IF;
//     END IF;
//     IF wait = 0 THEN v_leases := v_leases || jsonb_build_object(p_ticket, now_ms + p_lease); END IF;
//     UPDATE "auth_attempts" SET leases = v_leases, failures = v_failures,
//       expires_at = greatest(state.expires_at, state.forget_at, CASE WHEN wait = 0 THEN now_ms + p_lease ELSE 0 END)
//     WHERE key = p_key;
//     RETURN wait;
//   END
//   $reserve$;
//   CREATE OR REPLACE FUNCTION "auth_attempts_settle"(p_key text, p_ticket text, p_outcome text, p_free integer, p_block float8, p_max_block float8, p_forget_after float8)
//   RETURNS float8 LANGUAGE plpgsql AS $settle$
//   DECLARE
//     now_ms float8 := extract(epoch from clock_timestamp()) * 1000;
//     state "auth_attempts"%ROWTYPE;
//     v_failures integer;
//     v_blocked_until float8;
//     block float8 := 0;
//   BEGIN
//     IF p_outcome = 'failure' THEN INSERT INTO "auth_attempts" (key) VALUES (p_key) ON CONFLICT (key) DO NOTHING; END IF;
//     SELECT * INTO state FROM "auth_attempts" WHERE key = p_key FOR UPDATE;
//     IF NOT FOUND THEN RETURN 0; END IF;
//     IF p_outcome = 'success' THEN
//       UPDATE "auth_attempts" SET leases = leases - p_ticket, failures = 0, blocked_until = 0, forget_at = 0 WHERE key = p_key;
//     ELSIF p_outcome = 'cancel' THEN
//       UPDATE "auth_attempts" SET leases = leases - p_ticket WHERE key = p_key;
//     ELSE
//       v_failures := CASE WHEN state.failures > 0 AND now_ms >= state.forget_at THEN 0 ELSE state.failures END + 1;
//       v_blocked_until := state.blocked_until;
//       IF v_failures >= p_free THEN
//         block := CASE WHEN v_failures - p_free >= 31 THEN p_max_block ELSE least(p_block * 2 ^ (v_failures - p_free), p_max_block) END;
//         v_blocked_until := now_ms + block;
//       END IF;
//       UPDATE "auth_attempts" SET leases = leases - p_ticket, failures = v_failures, blocked_until = v_blocked_until,
//         forget_at = greatest(v_blocked_until, now_ms) + p_forget_after,
//         expires_at = greatest(state.expires_at, greatest(v_blocked_until, now_ms) + p_forget_after)
//       WHERE key = p_key;
//     END IF;
//     RETURN block;
//   END
//   $settle$;
//   CREATE TABLE IF NOT EXISTS "auth_one_time_tokens" (
//     slot text PRIMARY KEY,
//     hash text NOT NULL,
//     purpose text NOT NULL,
//     account_id text NOT NULL,
//     email text NOT NULL,
//     credential_version integer NOT NULL,
//     password_hash text,
//     fields jsonb,
//     expires_at timestamptz NOT NULL
//   );
//   CREATE INDEX IF NOT EXISTS "auth_one_time_tokens_expires_idx" ON "auth_one_time_tokens" (expires_at);
//   CREATE INDEX IF NOT EXISTS "auth_one_time_tokens_account_idx" ON "auth_one_time_tokens" (account_id) WHERE account_id <> '';
//   CREATE TABLE IF NOT EXISTS "auth_mfa" (
//     account_id text PRIMARY KEY,
//     secret text NOT NULL,
//     enabled boolean NOT NULL DEFAULT false,
//     last_step bigint NOT NULL DEFAULT 0,
//     recovery_codes text[] NOT NULL DEFAULT '{}'
//   );
//   CREATE TABLE IF NOT EXISTS "auth_passkeys" (
//     credential_id text PRIMARY KEY,
//     account_id text NOT NULL,
//     public_key text NOT NULL,
//     counter bigint NOT NULL DEFAULT 0,
//     backup_eligible boolean NOT NULL,
//     backed_up boolean NOT NULL,
//     transports text[] NOT NULL DEFAULT '{}',
//     name text NOT NULL,
//     created_at float8 NOT NULL,
//     last_used_at float8
//   );
//   CREATE INDEX IF NOT EXISTS "auth_passkeys_account_idx" ON "auth_passkeys" (account_id, created_at);
//   CREATE TABLE IF NOT EXISTS "auth_passkeys_handles" (
//     account_id text PRIMARY KEY,
//     handle text NOT NULL UNIQUE
//   );
//   CREATE TABLE IF NOT EXISTS "auth_passkeys_generations" (
//     account_id text PRIMARY KEY,
//     generation bigint NOT NULL
//   );
//   CREATE OR REPLACE FUNCTION "auth_passkeys_add"(p_id text, p_account text, p_public_key text, p_counter bigint, p_be boolean, p_bs boolean,
//     p_transports text[], p_name text, p_created float8, p_max integer, p_generation bigint)
//   RETURNS text LANGUAGE plpgsql AS $add$
//   BEGIN
//     -- One add or removal per account at a time, so the generation and the count below stay true until the insert.
//     PERFORM pg_advisory_xact_lock(hashtext('auth_passkeys'), hashtext(p_account));
//     IF coalesce((SELECT generation FROM "auth_passkeys_generations" WHERE account_id = p_account), 0) <> p_generation THEN RETURN 'outrun'; END IF;
//     IF EXISTS (SELECT 1 FROM "auth_passkeys" WHERE credential_id = p_id) THEN RETURN 'duplicate'; END IF;
//     IF (SELECT count(*) FROM "auth_passkeys" WHERE account_id = p_account) >= p_max THEN RETURN 'limit'; END IF;
//     INSERT INTO "auth_passkeys" (credential_id, account_id, public_key, counter, backup_eligible, backed_up, transports, name, created_at)
//       VALUES (p_id, p_account, p_public_key, p_counter, p_be, p_bs, p_transports, p_name, p_created) ON CONFLICT (credential_id) DO NOTHING;
//     IF NOT FOUND THEN RETURN 'duplicate'; END IF;
//     RETURN 'added';
//   END
//   $add$;
//   CREATE OR REPLACE FUNCTION "auth_passkeys_remove_all"(p_account text)
//   RETURNS integer LANGUAGE plpgsql AS $remove_all$
//   DECLARE removed integer;
//   BEGIN
//     PERFORM pg_advisory_xact_lock(hashtext('auth_passkeys'), hashtext(p_account));
//     INSERT INTO "auth_passkeys_generations" AS g (account_id, generation) VALUES (p_account, 1)
//       ON CONFLICT (account_id) DO UPDATE SET generation = g.generation + 1;
//     DELETE FROM "auth_passkeys" WHERE account_id = p_account;
//     GET DIAGNOSTICS removed = ROW_COUNT;
//     RETURN removed;
//   END
//   $remove_all$;
//   CREATE OR REPLACE FUNCTION "auth_passkeys_forget"(p_account text)
//   RETURNS integer LANGUAGE plpgsql AS $forget$
//   DECLARE removed integer;
//   BEGIN
//     PERFORM pg_advisory_xact_lock(hashtext('auth_passkeys'), hashtext(p_account));
//     DELETE FROM "auth_passkeys" WHERE account_id = p_account;
//     GET DIAGNOSTICS removed = ROW_COUNT;
//     DELETE FROM "auth_passkeys_handles" WHERE account_id = p_account;
//     DELETE FROM "auth_passkeys_generations" WHERE account_id = p_account;
//     RETURN removed;
//   END
//   $forget$;
//   CREATE TABLE IF NOT EXISTS "auth_trusted_devices_generations" (
//     account_id text PRIMARY KEY,
//     generation integer NOT NULL
//   );
//   CREATE TABLE IF NOT EXISTS "auth_trusted_devices" (
//     account_id text NOT NULL,
//     device_hash text NOT NULL,
//     id text NOT NULL,
//     label text NOT NULL,
//     generation integer NOT NULL,
//     created_at timestamptz NOT NULL DEFAULT now(),
//     last_used_at timestamptz NOT NULL DEFAULT now(),
//     trusted_until timestamptz NOT NULL,
//     PRIMARY KEY (account_id, device_hash)
//   );
//   CREATE INDEX IF NOT EXISTS "auth_trusted_devices_expiry_idx" ON "auth_trusted_devices" (trusted_until);
// postgres-schema:end
import pg from 'pg'
import {
  createPostgresSchema, PostgresAccountStore, PostgresActivityStore, PostgresAttemptStore, PostgresMfaStore, PostgresOneTimeTokenStore, PostgresPasskeyStore,
  PostgresSessionStore, PostgresTrustedDeviceStore
} from '../../lib/stores/postgres/index.js'
import type { ServerStores, StoreLogger } from './types.js'

export async function postgresStores (connectionString: string, logError: StoreLogger): Promise<ServerStores> {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    // Bounded waits: a dead or blackholed server fails requests fast instead of queueing them.
    connectionTimeoutMillis: 2000,
    query_timeout: 2000
  })
  // An idle connection that dies (server restart) is reported here; without a listener it would crash the process.
  pool.on('error', (err) => { logError('PostgreSQL connection lost', err) })
  await createPostgresSchema(pool).catch(async (err: Error) => {
    await pool.end().catch(() => {})
    throw new Error(`DATABASE_URL: cannot set up the tables in PostgreSQL (${err.message})`)
  })
  const accounts = new PostgresAccountStore({ pool })
  return {
    accounts,
    sessions: new PostgresSessionStore({ pool }),
    attempts: new PostgresAttemptStore({ pool }),
    oneTimeTokens: new PostgresOneTimeTokenStore({ pool }),
    mfa: new PostgresMfaStore({ pool }),
    passkeys: new PostgresPasskeyStore({ pool }),
    activity: new PostgresActivityStore({ pool }),
    trustedDevices: new PostgresTrustedDeviceStore({ pool }),
    seed: async (seeds) => { for (const seed of seeds) await accounts.add(seed, { ifAbsent: true }) },
    healthCheck: async () => { await pool.query('SELECT 1') },
    close: async () => { await pool.end() }
  }
}
