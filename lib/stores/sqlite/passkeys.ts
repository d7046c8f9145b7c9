import { markProcessLocal } from '../process-local.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { PasskeyAddResult, PasskeyStore, StoredPasskey } from '../types.js'
import { bit, immediate, many, one, prepareAll, quoteName, type Prepared, type SqliteDatabase } from './sql.js'

export interface SqlitePasskeyStoreOptions {
  /** Your `better-sqlite3` Database; the store never opens or closes it. */
  database: SqliteDatabase
  /**
   * Table name (default 'auth_passkeys'); the user handles live in `<table>_handles`, the accounts' generations in
   * `<table>_generations`.
   */
  table?: string
}

/**
 * The DDL of the passkey tables: one row per credential (public key, counter, flags, name, times: nothing that
 * signs in), one per account's user handle, one per account's generation (from its first removeAll).
 */
export function passkeysTableSqlite (table = 'auth_passkeys'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  credential_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  public_key TEXT NOT NULL,
  counter INTEGER NOT NULL DEFAULT 0,
  backup_eligible INTEGER NOT NULL,
  backed_up INTEGER NOT NULL,
  transports TEXT NOT NULL DEFAULT '[]',
  name TEXT NOT NULL,
  created_at REAL NOT NULL,
  last_used_at REAL
) STRICT;
CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_account_idx`)} ON ${name} (account_id, created_at);
CREATE TABLE IF NOT EXISTS ${quoteName(`${table}_handles`)} (
  account_id TEXT PRIMARY KEY,
  handle TEXT NOT NULL UNIQUE
) STRICT;
CREATE TABLE IF NOT EXISTS ${quoteName(`${table}_generations`)} (
  account_id TEXT PRIMARY KEY,
  generation INTEGER NOT NULL
) STRICT;`
}

const COLUMNS = `credential_id AS id, account_id AS accountId, public_key AS publicKey, counter, backup_eligible AS backupEligible,
  backed_up AS backedUp, transports, name, created_at AS createdAt, last_used_at AS lastUsedAt`

function passkeyStatements (table: string) {
  const name = quoteName(table)
  const handles = quoteName(`${table}_handles`)
  const generations = quoteName(`${table}_generations`)
  return {
    // DO UPDATE (to the same value) returns the stored handle when the account has one.
    userHandle: `INSERT INTO ${handles} (account_id, handle) VALUES (@accountId, @candidate)
      ON CONFLICT (account_id) DO UPDATE SET handle = handle RETURNING handle`,
    generation: `SELECT generation FROM ${generations} WHERE account_id = @accountId`,
    exists: `SELECT 1 FROM ${name} WHERE credential_id = @id`,
    count: `SELECT count(*) AS n FROM ${name} WHERE account_id = @accountId`,
    insert: `INSERT INTO ${name} (credential_id, account_id, public_key, counter, backup_eligible, backed_up, transports, name, created_at)
      VALUES (@id, @accountId, @publicKey, @counter, @backupEligible, @backedUp, @transports, @name, @createdAt)`,
    get: `SELECT ${COLUMNS} FROM ${name} WHERE credential_id = @id`,
    list: `SELECT ${COLUMNS} FROM ${name} WHERE account_id = @accountId ORDER BY created_at, credential_id`,
    use: `UPDATE ${name} SET counter = @counter, backed_up = @backedUp, last_used_at = @usedAt WHERE credential_id = @id AND counter = @expectedCounter`,
    remove: `DELETE FROM ${name} WHERE account_id = @accountId AND credential_id = @id`,
    advance: `INSERT INTO ${generations} (account_id, generation) VALUES (@accountId, 1)
      ON CONFLICT (account_id) DO UPDATE SET generation = generation + 1`,
    removeAll: `DELETE FROM ${name} WHERE account_id = @accountId`,
    forgetHandle: `DELETE FROM ${handles} WHERE account_id = @accountId`,
    forgetGeneration: `DELETE FROM ${generations} WHERE account_id = @accountId`
  }
}

function passkeyOf (row: Record<string, any> | undefined): StoredPasskey | null {
  if (row === undefined) return null
  return { ...row, backupEligible: row.backupEligible === 1, backedUp: row.backedUp === 1, transports: JSON.parse(row.transports) } as StoredPasskey
}

const OPTIONS: StoreOptionRules = { database: 'database', table: 'name' }

/**
 * Passkeys in SQLite. An add reads the account's generation and count and inserts in one `BEGIN IMMEDIATE`
 * transaction, as a removal of all advances the generation and deletes in one: each sees what the one before it
 * wrote. A use updates the row only if its counter is still the expected one.
 */
export class SqlitePasskeyStore implements PasskeyStore {
  readonly #sql: Prepared<typeof passkeyStatements>
  readonly #add: (passkey: StoredPasskey, max: number, generation: number) => PasskeyAddResult
  readonly #removeAll: (accountId: string) => number
  readonly #forget: (accountId: string) => number

  constructor (options: SqlitePasskeyStoreOptions) {
    checkStoreOptions('SqlitePasskeyStore', options, OPTIONS)
    markProcessLocal(this)
    const { database, table = 'auth_passkeys' } = options
    const sql = this.#sql = prepareAll('SqlitePasskeyStore', database, passkeyStatements(table))
    const generationOf = (accountId: string): number => one(sql.generation, { accountId })?.generation ?? 0
    this.#add = immediate(database, (passkey: StoredPasskey, max: number, generation: number): PasskeyAddResult => {
      const { accountId } = passkey
      if (generationOf(accountId) !== generation) return 'outrun'
      if (one(sql.exists, { id: passkey.id }) !== undefined) return 'duplicate'
      if (one(sql.count, { accountId })!.n >= max) return 'limit'
      sql.insert.run({
        ...passkey, backupEligible: bit(passkey.backupEligible), backedUp: bit(passkey.backedUp), transports: JSON.stringify(passkey.transports)
      })
      return 'added'
    })
    this.#removeAll = immediate(database, (accountId: string): number => {
      sql.advance.run({ accountId })
      return sql.removeAll.run({ accountId }).changes
    })
    this.#forget = immediate(database, (accountId: string): number => {
      const removed = sql.removeAll.run({ accountId }).changes
      sql.forgetHandle.run({ accountId })
      sql.forgetGeneration.run({ accountId })
      return removed
    })
    this.#generation = generationOf
  }

  readonly #generation: (accountId: string) => number

  async generation (accountId: string): Promise<number> {
    return this.#generation(accountId)
  }

  async userHandle (accountId: string, candidate: string): Promise<string> {
    return one(this.#sql.userHandle, { accountId, candidate })!.handle
  }

  async add (passkey: StoredPasskey, max: number, generation: number): Promise<PasskeyAddResult> {
    return this.#add(passkey, max, generation)
  }

  async get (credentialId: string): Promise<StoredPasskey | null> {
    return passkeyOf(one(this.#sql.get, { id: credentialId }))
  }

  async list (accountId: string): Promise<StoredPasskey[]> {
    return many(this.#sql.list, { accountId }).map((row) => passkeyOf(row)!)
  }

  async use (credentialId: string, expectedCounter: number, counter: number, backedUp: boolean, usedAt: number): Promise<boolean> {
    return this.#sql.use.run({ id: credentialId, expectedCounter, counter, backedUp: bit(backedUp), usedAt }).changes > 0
  }

  async remove (accountId: string, credentialId: string): Promise<boolean> {
    return this.#sql.remove.run({ accountId, id: credentialId }).changes > 0
  }

  async removeAll (accountId: string): Promise<number> {
    return this.#removeAll(accountId)
  }

  async forget (accountId: string): Promise<number> {
    return this.#forget(accountId)
  }
}
