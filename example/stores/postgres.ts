// Accounts (and, without Redis, revocations) in PostgreSQL. The tables are created at start if missing:
//
//   CREATE TABLE IF NOT EXISTS "auth_accounts" (
//     id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
//     email text NOT NULL,
//     password_hash text NOT NULL,
//     active boolean NOT NULL DEFAULT true,
//     credential_version integer NOT NULL DEFAULT 0,
//     created_at timestamptz NOT NULL DEFAULT now()
//   );
//   CREATE UNIQUE INDEX IF NOT EXISTS "auth_accounts_email_key" ON "auth_accounts" (lower(email));
//   CREATE TABLE IF NOT EXISTS "auth_revocations" (token_id text PRIMARY KEY, expires_at bigint NOT NULL);
//   CREATE INDEX IF NOT EXISTS "auth_revocations_expires_at_idx" ON "auth_revocations" (expires_at);
import pg from 'pg'
import { createPostgresSchema, PostgresAccountStore, PostgresRevocationStore } from '../../lib/postgres.js'
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
    revocations: new PostgresRevocationStore({ pool }),
    seed: async (seeds) => { for (const seed of seeds) await accounts.add(seed, { ifAbsent: true }) },
    healthCheck: async () => { await pool.query('SELECT 1') },
    close: async () => { await pool.end() }
  }
}
