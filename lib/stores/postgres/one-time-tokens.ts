import { baseName, prepare, pruneNowAndThen, quoteName, type PostgresConnection, type Queryable, type Statement } from './sql.js'
import type { OneTimeToken, OneTimeTokenStore } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface PostgresOneTimeTokenStoreOptions extends PostgresConnection {
  /** Table name, optionally schema-qualified (default 'auth_one_time_tokens'). */
  table?: string
  /** Expired rows are deleted at most this often, in the background of a put (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the one-time tokens table: one row per slot, the token's keyed hash but never the token. */
export function oneTimeTokensTableSql (table = 'auth_one_time_tokens'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  slot text PRIMARY KEY,
  hash text NOT NULL,
  purpose text NOT NULL,
  account_id text NOT NULL,
  email text NOT NULL,
  credential_version integer NOT NULL,
  password_hash text,
  fields jsonb,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_expires_idx`)} ON ${name} (expires_at);
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_account_idx`)} ON ${name} (account_id) WHERE account_id <> '';`
}

const TOKEN = 'purpose, account_id AS "accountId", email, credential_version AS "credentialVersion", password_hash AS "passwordHash", fields'
const LIVE = 'slot = $1 AND hash = $2 AND purpose = $3 AND expires_at > now()'

function tokenOf (row: (OneTimeToken & { passwordHash: string | null, fields: Record<string, unknown> | null }) | undefined): OneTimeToken | null {
  if (row === undefined) return null
  const { passwordHash, fields, ...token } = row
  return { ...token, ...(passwordHash === null ? {} : { passwordHash }), ...(fields === null ? {} : { fields }) }
}

const OPTIONS: StoreOptionRules = { pool: 'pool', preparedStatements: 'boolean', table: 'name', pruneIntervalMs: 'milliseconds' }

/** One-time tokens in PostgreSQL: each call is one statement, consume a DELETE … RETURNING (one winner). */
export class PostgresOneTimeTokenStore implements OneTimeTokenStore {
  readonly #pool: Queryable
  readonly #pruneNowAndThen: () => void
  readonly #sql: Record<'put' | 'find' | 'consume' | 'consumeFirst' | 'list' | 'remove' | 'removeAll' | 'prune', Statement>

  constructor (options: PostgresOneTimeTokenStoreOptions) {
    checkStoreOptions('PostgresOneTimeTokenStore', options, OPTIONS)
    const { pool, preparedStatements = true, table = 'auth_one_time_tokens', pruneIntervalMs = 60_000 } = options
    const name = quoteName(table)
    this.#pool = pool
    this.#pruneNowAndThen = pruneNowAndThen(async () => await this.prune(), pruneIntervalMs)
    this.#sql = prepare({
      put: `INSERT INTO ${name} (slot, hash, purpose, account_id, email, credential_version, expires_at, password_hash, fields)
        VALUES ($1, $2, $3, $4, $5, $6, now() + $7::float8 * interval '1 millisecond', $8, $9::jsonb)
        ON CONFLICT (slot) DO UPDATE SET hash = EXCLUDED.hash, purpose = EXCLUDED.purpose, account_id = EXCLUDED.account_id,
          email = EXCLUDED.email, credential_version = EXCLUDED.credential_version, expires_at = EXCLUDED.expires_at,
          password_hash = EXCLUDED.password_hash, fields = EXCLUDED.fields`,
      find: `SELECT ${TOKEN} FROM ${name} WHERE ${LIVE}`,
      consume: `DELETE FROM ${name} WHERE ${LIVE} RETURNING ${TOKEN}`,
      // One statement: the group's rows go together, and only when no other live one expires first. Of concurrent
      // calls on one group the first to lock its rows deletes them all; the others find their own row gone.
      consumeFirst: `WITH target AS (
          SELECT account_id, expires_at FROM ${name} WHERE ${LIVE} AND account_id <> ''
        ), earlier AS (
          SELECT 1 FROM ${name} o, target WHERE o.account_id = target.account_id AND o.purpose = $3 AND o.slot <> $1
            AND o.expires_at > now() AND o.expires_at < target.expires_at
        ), gone AS (
          DELETE FROM ${name} o USING target WHERE o.account_id = target.account_id AND o.purpose = $3
            AND (o.slot <> $1 OR o.hash = $2) AND NOT EXISTS (SELECT 1 FROM earlier)
          RETURNING o.slot, o.purpose, o.account_id, o.email, o.credential_version, o.password_hash, o.fields
        )
        SELECT ${TOKEN} FROM gone WHERE slot = $1`,
      list: `SELECT ${TOKEN} FROM ${name} WHERE account_id = $1 AND account_id <> '' AND purpose = $2 AND expires_at > now()`,
      remove: `DELETE FROM ${name} WHERE slot = $1`,
      removeAll: `DELETE FROM ${name} WHERE account_id = $1 AND account_id <> ''`,
      prune: `DELETE FROM ${name} WHERE expires_at <= now()`
    }, preparedStatements)
  }

  async put (slot: string, hash: string, token: OneTimeToken, ttlMs: number): Promise<void> {
    this.#pruneNowAndThen()
    await this.#pool.query({
      ...this.#sql.put,
      values: [slot, hash, token.purpose, token.accountId, token.email, token.credentialVersion, ttlMs, token.passwordHash ?? null,
        token.fields === undefined ? null : JSON.stringify(token.fields)]
    })
  }

  async find (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    return tokenOf((await this.#pool.query({ ...this.#sql.find, values: [slot, hash, purpose] })).rows[0])
  }

  async consume (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    return tokenOf((await this.#pool.query({ ...this.#sql.consume, values: [slot, hash, purpose] })).rows[0])
  }

  async consumeFirst (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    return tokenOf((await this.#pool.query({ ...this.#sql.consumeFirst, values: [slot, hash, purpose] })).rows[0])
  }

  async list (accountId: string, purpose: string): Promise<OneTimeToken[]> {
    return (await this.#pool.query({ ...this.#sql.list, values: [accountId, purpose] })).rows.map((row) => tokenOf(row)!)
  }

  async remove (slot: string): Promise<void> {
    await this.#pool.query({ ...this.#sql.remove, values: [slot] })
  }

  async removeAll (accountId: string): Promise<void> {
    await this.#pool.query({ ...this.#sql.removeAll, values: [accountId] })
  }

  /** Deletes expired rows; resolves how many. */
  async prune (): Promise<number> {
    return (await this.#pool.query({ ...this.#sql.prune })).rowCount ?? 0
  }
}
