// Accounts (and, without Redis, sessions) in PostgreSQL. The tables are created at start if missing
// (the DDL of accountsTableSql() and sessionsTableSql(); test/postgres-docs.test.ts keeps this copy equal):
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
//     user_agent text NOT NULL
//   );
//   ALTER TABLE "auth_sessions" ADD COLUMN IF NOT EXISTS authenticated_at timestamptz NOT NULL DEFAULT now();
//   CREATE INDEX IF NOT EXISTS "auth_sessions_account_id_idx" ON "auth_sessions" (account_id);
//   CREATE INDEX IF NOT EXISTS "auth_sessions_expiry_idx" ON "auth_sessions" (LEAST(idle_until, ends_at));
// postgres-schema:end
import pg from 'pg'
import { createPostgresSchema, PostgresAccountStore, PostgresSessionStore } from '../../lib/stores/postgres/index.js'
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
  await createPostgresSchema(pool)
  const accounts = new PostgresAccountStore({ pool })
  return {
    accounts,
    sessions: new PostgresSessionStore({ pool }),
    seed: async (seeds) => { for (const seed of seeds) await accounts.add(seed, { ifAbsent: true }) },
    healthCheck: async () => { await pool.query('SELECT 1') },
    close: async () => { await pool.end() }
  }
}
