import { markProcessLocal } from '../process-local.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { NewTrustedDevice, TrustedDeviceInfo, TrustedDeviceStore } from '../types.js'
import { immediate, many, one, prepareAll, pruneNowAndThen, quoteName, type Prepared, type SqliteDatabase } from './sql.js'

export interface SqliteTrustedDeviceStoreOptions {
  /** Your `better-sqlite3` Database; the store never opens or closes it. */
  database: SqliteDatabase
  /** Table name (default 'auth_trusted_devices'); the generations live beside it in `<table>_generations`. */
  table?: string
  /** Rows of ended trusts are deleted at most this often, during a trust() (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the trusted-device tables: one row per trust (a keyed hash of the device, never a token), one generation per account. */
export function trustedDevicesTableSqlite (table = 'auth_trusted_devices'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(`${table}_generations`)} (
  account_id TEXT PRIMARY KEY,
  generation INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  account_id TEXT NOT NULL,
  device_hash TEXT NOT NULL,
  id TEXT NOT NULL,
  label TEXT NOT NULL,
  generation INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  trusted_until INTEGER NOT NULL,
  PRIMARY KEY (account_id, device_hash)
) STRICT;
CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_expiry_idx`)} ON ${quoteName(table)} (trusted_until);`
}

function trustedDeviceStatements (table: string) {
  const name = quoteName(table)
  const generations = quoteName(`${table}_generations`)
  const current = `coalesce((SELECT g.generation FROM ${generations} g WHERE g.account_id = @accountId), 0)`
  const live = `account_id = @accountId AND generation = ${current} AND trusted_until > @now`
  return {
    generation: `SELECT ${current} AS generation`,
    // `WHERE` in the SELECT also keeps SQLite from reading ON CONFLICT as a join's constraint.
    trust: `INSERT INTO ${name} (account_id, device_hash, id, label, generation, created_at, last_used_at, trusted_until)
      SELECT @accountId, @deviceHash, @id, @label, @generation, @now, @now, @trustedUntil WHERE ${current} = @generation
      ON CONFLICT (account_id, device_hash) DO UPDATE SET id = excluded.id, label = excluded.label, generation = excluded.generation,
        created_at = excluded.created_at, last_used_at = excluded.last_used_at, trusted_until = excluded.trusted_until`,
    use: `UPDATE ${name} SET last_used_at = @now WHERE ${live} AND device_hash IN (SELECT value FROM json_each(@hashes)) RETURNING id, generation`,
    list: `SELECT id, label, created_at AS createdAt, trusted_until AS trustedUntil, last_used_at AS lastUsedAt FROM ${name} WHERE ${live} ORDER BY created_at, id`,
    remove: `DELETE FROM ${name} WHERE ${live} AND id = @id`,
    advance: `INSERT INTO ${generations} (account_id, generation) VALUES (@accountId, 1)
      ON CONFLICT (account_id) DO UPDATE SET generation = generation + 1 RETURNING generation`,
    older: `DELETE FROM ${name} WHERE account_id = @accountId AND generation < @generation`,
    forgetTrusts: `DELETE FROM ${name} WHERE account_id = @accountId`,
    forgetGeneration: `DELETE FROM ${generations} WHERE account_id = @accountId`,
    prune: `DELETE FROM ${name} AS t WHERE t.trusted_until <= @now
      OR t.generation < coalesce((SELECT g.generation FROM ${generations} g WHERE g.account_id = t.account_id), 0)`
  }
}

const OPTIONS: StoreOptionRules = { database: 'database', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * Devices trusted for the second factor, in SQLite. A trust is live while its generation is the account's (read in
 * the same statement) and it has not expired; endAll() advances the generation and deletes the older trusts in one
 * `BEGIN IMMEDIATE` transaction, so a trust written meanwhile with the older generation is never live.
 */
export class SqliteTrustedDeviceStore implements TrustedDeviceStore {
  readonly #sql: Prepared<typeof trustedDeviceStatements>
  readonly #endAll: (accountId: string) => number
  readonly #forget: (accountId: string) => void
  readonly #pruneNowAndThen: () => void

  constructor (options: SqliteTrustedDeviceStoreOptions) {
    checkStoreOptions('SqliteTrustedDeviceStore', options, OPTIONS)
    markProcessLocal(this)
    const { database, table = 'auth_trusted_devices', pruneIntervalMs = 60_000 } = options
    const sql = this.#sql = prepareAll('SqliteTrustedDeviceStore', database, trustedDeviceStatements(table))
    this.#pruneNowAndThen = pruneNowAndThen(() => this.#prune(), pruneIntervalMs)
    this.#endAll = immediate(database, (accountId: string): number => {
      const { generation } = one(sql.advance, { accountId })!
      sql.older.run({ accountId, generation })
      return generation
    })
    this.#forget = immediate(database, (accountId: string): void => {
      sql.forgetTrusts.run({ accountId })
      sql.forgetGeneration.run({ accountId })
    })
  }

  async generation (accountId: string): Promise<number> {
    return one(this.#sql.generation, { accountId })!.generation
  }

  async trust (accountId: string, { id, deviceHash, label }: NewTrustedDevice, ttlMs: number, generation: number): Promise<boolean> {
    this.#pruneNowAndThen()
    const now = Date.now()
    return this.#sql.trust.run({ accountId, deviceHash, id, label, generation, now, trustedUntil: now + ttlMs }).changes > 0
  }

  async use (accountId: string, deviceHashes: string[]): Promise<{ id: string, generation: number } | null> {
    const [row] = many(this.#sql.use, { accountId, hashes: JSON.stringify(deviceHashes), now: Date.now() })
    return row === undefined ? null : { id: row.id, generation: row.generation }
  }

  async list (accountId: string): Promise<TrustedDeviceInfo[]> {
    return many(this.#sql.list, { accountId, now: Date.now() }) as TrustedDeviceInfo[]
  }

  async remove (accountId: string, id: string): Promise<boolean> {
    return this.#sql.remove.run({ accountId, id, now: Date.now() }).changes > 0
  }

  async endAll (accountId: string): Promise<number> {
    return this.#endAll(accountId)
  }

  async forget (accountId: string): Promise<void> {
    this.#forget(accountId)
  }

  /** Deletes the rows of trusts that ended (expired, or of an older generation); resolves how many. */
  async prune (): Promise<number> {
    return this.#prune()
  }

  #prune (): number {
    return this.#sql.prune.run({ now: Date.now() }).changes
  }
}
