import { baseName, prepare, pruneNowAndThen, quoteName, siblingName, type PostgresConnection, type Queryable, type Statement } from './sql.js'
import type { NewTrustedDevice, TrustedDeviceInfo, TrustedDeviceStore } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface PostgresTrustedDeviceStoreOptions extends PostgresConnection {
  /** Table name, optionally schema-qualified (default 'auth_trusted_devices'); the generations live beside it in `<table>_generations`. */
  table?: string
  /** Rows of ended trusts are deleted at most this often, in the background of a trust() (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the trusted-device tables: one row per trust (a keyed hash of the device, never a token), one generation per account. */
export function trustedDevicesTableSql (table = 'auth_trusted_devices'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${siblingName(table, 'generations')} (
  account_id text PRIMARY KEY,
  generation integer NOT NULL
);
CREATE TABLE IF NOT EXISTS ${name} (
  account_id text NOT NULL,
  device_hash text NOT NULL,
  id text NOT NULL,
  label text NOT NULL,
  generation integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now(),
  trusted_until timestamptz NOT NULL,
  PRIMARY KEY (account_id, device_hash)
);
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_expiry_idx`)} ON ${name} (trusted_until);`
}

const ms = (column: string): string => `(extract(epoch from ${column}) * 1000)::float8`

const OPTIONS: StoreOptionRules = { pool: 'pool', preparedStatements: 'boolean', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * Devices trusted for the second factor, in PostgreSQL. A trust is live while its generation is the account's
 * (read in the same statement) and it has not expired; endAll() advances the generation with one upsert, so
 * of concurrent calls none is lost, and a trust written meanwhile with the older generation is never live.
 */
export class PostgresTrustedDeviceStore implements TrustedDeviceStore {
  readonly #pool: Queryable
  readonly #pruneNowAndThen: () => void
  readonly #sql: Record<'generation' | 'trust' | 'use' | 'list' | 'remove' | 'endAll' | 'forget' | 'prune', Statement>

  constructor (options: PostgresTrustedDeviceStoreOptions) {
    checkStoreOptions('PostgresTrustedDeviceStore', options, OPTIONS)
    const { pool, preparedStatements = true, table = 'auth_trusted_devices', pruneIntervalMs = 60_000 } = options
    const name = quoteName(table)
    const generations = siblingName(table, 'generations')
    const current = `coalesce((SELECT g.generation FROM ${generations} g WHERE g.account_id = $1), 0)`
    const live = `account_id = $1 AND generation = ${current} AND trusted_until > now()`
    this.#pool = pool
    this.#pruneNowAndThen = pruneNowAndThen(async () => await this.prune(), pruneIntervalMs)
    this.#sql = prepare({
      generation: `SELECT ${current} AS generation`,
      trust: `INSERT INTO ${name} AS t (account_id, device_hash, id, label, generation, trusted_until)
        SELECT $1::text, $2::text, $3::text, $4::text, $5::integer, now() + $6::float8 * interval '1 millisecond' WHERE ${current} = $5::integer
        ON CONFLICT (account_id, device_hash) DO UPDATE SET id = EXCLUDED.id, label = EXCLUDED.label, generation = EXCLUDED.generation,
          created_at = now(), last_used_at = now(), trusted_until = EXCLUDED.trusted_until
        RETURNING 1`,
      use: `UPDATE ${name} SET last_used_at = now() WHERE ${live} AND device_hash = ANY($2::text[]) RETURNING id, generation`,
      list: `SELECT id, label, ${ms('created_at')} AS "createdAt", ${ms('trusted_until')} AS "trustedUntil", ${ms('last_used_at')} AS "lastUsedAt"
        FROM ${name} WHERE ${live} ORDER BY created_at, id`,
      remove: `DELETE FROM ${name} WHERE ${live} AND id = $2 RETURNING 1`,
      endAll: `WITH bumped AS (
          INSERT INTO ${generations} AS g (account_id, generation) VALUES ($1, 1)
          ON CONFLICT (account_id) DO UPDATE SET generation = g.generation + 1 RETURNING generation
        ), ended AS (DELETE FROM ${name} WHERE account_id = $1 AND generation < (SELECT generation FROM bumped))
        SELECT generation FROM bumped`,
      forget: `WITH trusts AS (DELETE FROM ${name} WHERE account_id = $1) DELETE FROM ${generations} WHERE account_id = $1`,
      prune: `DELETE FROM ${name} t WHERE t.trusted_until <= now()
        OR t.generation < coalesce((SELECT g.generation FROM ${generations} g WHERE g.account_id = t.account_id), 0)`
    }, preparedStatements)
  }

  async generation (accountId: string): Promise<number> {
    const { rows } = await this.#pool.query({ ...this.#sql.generation, values: [accountId] })
    return Number(rows[0].generation)
  }

  async trust (accountId: string, { id, deviceHash, label }: NewTrustedDevice, ttlMs: number, generation: number): Promise<boolean> {
    this.#pruneNowAndThen()
    const { rowCount } = await this.#pool.query({ ...this.#sql.trust, values: [accountId, deviceHash, id, label, generation, ttlMs] })
    return (rowCount ?? 0) > 0
  }

  async use (accountId: string, deviceHashes: string[]): Promise<{ id: string, generation: number } | null> {
    const { rows } = await this.#pool.query({ ...this.#sql.use, values: [accountId, deviceHashes] })
    return rows[0] === undefined ? null : { id: String(rows[0].id), generation: Number(rows[0].generation) }
  }

  async list (accountId: string): Promise<TrustedDeviceInfo[]> {
    const { rows } = await this.#pool.query({ ...this.#sql.list, values: [accountId] })
    return rows.map((row: Record<string, unknown>) => ({
      id: String(row.id),
      label: String(row.label),
      createdAt: Math.floor(Number(row.createdAt)),
      trustedUntil: Math.floor(Number(row.trustedUntil)),
      lastUsedAt: Math.floor(Number(row.lastUsedAt))
    }))
  }

  async remove (accountId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query({ ...this.#sql.remove, values: [accountId, id] })
    return (rowCount ?? 0) > 0
  }

  async endAll (accountId: string): Promise<number> {
    const { rows } = await this.#pool.query({ ...this.#sql.endAll, values: [accountId] })
    return Number(rows[0].generation)
  }

  async forget (accountId: string): Promise<void> {
    await this.#pool.query({ ...this.#sql.forget, values: [accountId] })
  }

  /** Deletes the rows of trusts that ended (expired, or of an older generation); resolves how many. */
  async prune (): Promise<number> {
    const { rowCount } = await this.#pool.query({ ...this.#sql.prune })
    return rowCount ?? 0
  }
}
