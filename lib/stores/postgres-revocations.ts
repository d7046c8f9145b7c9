import type { RevocationStore } from './types.js'
import { baseName, prepare, quoteName, type Queryable, type Statement } from './postgres-sql.js'

export interface PostgresRevocationStoreOptions {
  /** Your `pg` Pool; the store never connects or ends it. */
  pool: Queryable
  /** Table name, optionally schema-qualified (default 'auth_revocations'). */
  table?: string
  /** Expired rows are deleted at most this often, in the background of a logout (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the revocations table: one row per revoked token id, until the token's expiry. */
export function revocationsTableSql (table = 'auth_revocations'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  token_id text PRIMARY KEY,
  expires_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_expires_at_idx`)} ON ${name} (expires_at);`
}

/**
 * Revoked token ids in PostgreSQL, for deployments without Redis. Expiry times are epoch milliseconds
 * compared with this process's clock; expired rows are pruned now and then, or by calling prune().
 */
export class PostgresRevocationStore implements RevocationStore {
  readonly #pool: Queryable
  readonly #pruneIntervalMs: number
  readonly #sql: Record<'revoke' | 'check' | 'prune', Statement>
  #nextPrune = 0

  constructor ({ pool, table = 'auth_revocations', pruneIntervalMs = 60_000 }: PostgresRevocationStoreOptions) {
    const name = quoteName(table)
    this.#pool = pool
    this.#pruneIntervalMs = pruneIntervalMs
    this.#sql = prepare({
      revoke: `INSERT INTO ${name} (token_id, expires_at) VALUES ($1, $2) ON CONFLICT (token_id) DO UPDATE SET expires_at = GREATEST(${name}.expires_at, EXCLUDED.expires_at)`,
      check: `SELECT 1 FROM ${name} WHERE token_id = $1 AND expires_at > $2`,
      prune: `DELETE FROM ${name} WHERE expires_at <= $1`
    })
  }

  async revoke (tokenId: string, expiresAt: number): Promise<void> {
    const now = Date.now()
    if (now >= this.#nextPrune) {
      this.#nextPrune = now + this.#pruneIntervalMs
      // Background housekeeping: a failed prune is retried at the next interval.
      this.prune().catch(() => {})
    }
    if (expiresAt <= now) return
    await this.#pool.query({ ...this.#sql.revoke, values: [tokenId, Math.ceil(expiresAt)] })
  }

  async isRevoked (tokenId: string): Promise<boolean> {
    const { rows } = await this.#pool.query({ ...this.#sql.check, values: [tokenId, Date.now()] })
    return rows.length > 0
  }

  /** Deletes expired revocations; resolves with how many. */
  async prune (): Promise<number> {
    const { rowCount } = await this.#pool.query({ ...this.#sql.prune, values: [Date.now()] })
    return rowCount ?? 0
  }
}
