import { markProcessLocal } from '../process-local.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { OneTimeToken, OneTimeTokenStore } from '../types.js'
import { immediate, many, one, prepareAll, pruneNowAndThen, quoteName, type Prepared, type SqliteDatabase } from './sql.js'

export interface SqliteOneTimeTokenStoreOptions {
  /** Your `better-sqlite3` Database; the store never opens or closes it. */
  database: SqliteDatabase
  /** Table name (default 'auth_one_time_tokens'). */
  table?: string
  /** Expired rows are deleted at most this often, during a put (default 60000 ms). */
  pruneIntervalMs?: number
}

/** The DDL of the one-time tokens table: one row per slot, the token's keyed hash but never the token; times in epoch ms. */
export function oneTimeTokensTableSqlite (table = 'auth_one_time_tokens'): string {
  const name = quoteName(table)
  return `CREATE TABLE IF NOT EXISTS ${name} (
  slot TEXT PRIMARY KEY,
  hash TEXT NOT NULL,
  purpose TEXT NOT NULL,
  account_id TEXT NOT NULL,
  email TEXT NOT NULL,
  credential_version INTEGER NOT NULL,
  password_hash TEXT,
  fields TEXT,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_expires_idx`)} ON ${name} (expires_at);
CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_account_idx`)} ON ${name} (account_id, purpose) WHERE account_id <> '';`
}

const TOKEN = 'purpose, account_id AS accountId, email, credential_version AS credentialVersion, password_hash AS passwordHash, fields'
const LIVE = 'slot = @slot AND hash = @hash AND purpose = @purpose AND expires_at > @now'

function tokenStatements (name: string) {
  return {
    put: `INSERT INTO ${name} (slot, hash, purpose, account_id, email, credential_version, password_hash, fields, expires_at)
      VALUES (@slot, @hash, @purpose, @accountId, @email, @credentialVersion, @passwordHash, @fields, @expiresAt)
      ON CONFLICT (slot) DO UPDATE SET hash = excluded.hash, purpose = excluded.purpose, account_id = excluded.account_id, email = excluded.email,
        credential_version = excluded.credential_version, password_hash = excluded.password_hash, fields = excluded.fields, expires_at = excluded.expires_at`,
    find: `SELECT ${TOKEN} FROM ${name} WHERE ${LIVE}`,
    consume: `DELETE FROM ${name} WHERE ${LIVE} RETURNING ${TOKEN}`,
    target: `SELECT account_id AS accountId, expires_at AS expiresAt FROM ${name} WHERE ${LIVE} AND account_id <> ''`,
    earlier: `SELECT 1 FROM ${name} WHERE account_id = @accountId AND purpose = @purpose AND slot <> @slot AND expires_at > @now AND expires_at < @expiresAt`,
    group: `DELETE FROM ${name} WHERE account_id = @accountId AND purpose = @purpose AND slot <> @slot`,
    list: `SELECT ${TOKEN} FROM ${name} WHERE account_id = @accountId AND account_id <> '' AND purpose = @purpose AND expires_at > @now`,
    remove: `DELETE FROM ${name} WHERE slot = @slot`,
    removeAll: `DELETE FROM ${name} WHERE account_id = @accountId AND account_id <> ''`,
    prune: `DELETE FROM ${name} WHERE expires_at <= @now`
  }
}

function tokenOf (row: Record<string, any> | undefined): OneTimeToken | null {
  if (row === undefined) return null
  const { passwordHash, fields, ...token } = row
  return { ...token, ...(passwordHash === null ? {} : { passwordHash }), ...(fields === null ? {} : { fields: JSON.parse(fields) }) } as OneTimeToken
}

const OPTIONS: StoreOptionRules = { database: 'database', table: 'name', pruneIntervalMs: 'milliseconds' }

/**
 * One-time tokens in SQLite: consume is one DELETE … RETURNING (one winner); consumeFirst checks and deletes the
 * account's tokens of one purpose in one `BEGIN IMMEDIATE` transaction.
 */
export class SqliteOneTimeTokenStore implements OneTimeTokenStore {
  readonly #sql: Prepared<typeof tokenStatements>
  readonly #consumeFirst: (slot: string, hash: string, purpose: string) => OneTimeToken | null
  readonly #pruneNowAndThen: () => void

  constructor (options: SqliteOneTimeTokenStoreOptions) {
    checkStoreOptions('SqliteOneTimeTokenStore', options, OPTIONS)
    markProcessLocal(this)
    const { database, table = 'auth_one_time_tokens', pruneIntervalMs = 60_000 } = options
    const sql = this.#sql = prepareAll('SqliteOneTimeTokenStore', database, tokenStatements(quoteName(table)))
    this.#pruneNowAndThen = pruneNowAndThen(() => sql.prune.run({ now: Date.now() }), pruneIntervalMs)
    this.#consumeFirst = immediate(database, (slot: string, hash: string, purpose: string): OneTimeToken | null => {
      const now = Date.now()
      const target = one(sql.target, { slot, hash, purpose, now })
      if (target === undefined || one(sql.earlier, { ...target, slot, purpose, now }) !== undefined) return null
      sql.group.run({ accountId: target.accountId, purpose, slot })
      return tokenOf(one(sql.consume, { slot, hash, purpose, now }))
    })
  }

  async put (slot: string, hash: string, token: OneTimeToken, ttlMs: number): Promise<void> {
    this.#pruneNowAndThen()
    this.#sql.put.run({
      slot,
      hash,
      purpose: token.purpose,
      accountId: token.accountId,
      email: token.email,
      credentialVersion: token.credentialVersion,
      passwordHash: token.passwordHash ?? null,
      fields: token.fields === undefined ? null : JSON.stringify(token.fields),
      expiresAt: Date.now() + ttlMs
    })
  }

  async find (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    return tokenOf(one(this.#sql.find, { slot, hash, purpose, now: Date.now() }))
  }

  async consume (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    return tokenOf(one(this.#sql.consume, { slot, hash, purpose, now: Date.now() }))
  }

  async consumeFirst (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    return this.#consumeFirst(slot, hash, purpose)
  }

  async list (accountId: string, purpose: string): Promise<OneTimeToken[]> {
    return many(this.#sql.list, { accountId, purpose, now: Date.now() }).map((row) => tokenOf(row)!)
  }

  async remove (slot: string): Promise<void> {
    this.#sql.remove.run({ slot })
  }

  async removeAll (accountId: string): Promise<void> {
    this.#sql.removeAll.run({ accountId })
  }

  /** Deletes expired rows; resolves how many. */
  async prune (): Promise<number> {
    return this.#sql.prune.run({ now: Date.now() }).changes
  }
}
