import { markProcessLocal } from '../process-local.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'
import type { MfaStore, StoredMfa } from '../types.js'
import { many, one, prepareAll, quoteName, type Prepared, type SqliteDatabase } from './sql.js'

export interface SqliteMfaStoreOptions {
  /** Your `better-sqlite3` Database; the store never opens or closes it. */
  database: SqliteDatabase
  /** Table name (default 'auth_mfa'). */
  table?: string
}

/** The DDL of the second-factor table: one row per account, the secret sealed and the recovery codes hashed (a JSON array). */
export function mfaTableSqlite (table = 'auth_mfa'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  account_id TEXT PRIMARY KEY,
  secret TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  last_step INTEGER NOT NULL DEFAULT 0,
  recovery_codes TEXT NOT NULL DEFAULT '[]'
) STRICT;`
}

const PAGE = 500
const USED = 'value IN (SELECT value FROM json_each(@hashes))'

function mfaStatements (name: string) {
  return {
    get: `SELECT secret, enabled, last_step AS lastStep, recovery_codes AS recoveryCodes FROM ${name} WHERE account_id = @accountId`,
    begin: `INSERT INTO ${name} (account_id, secret) VALUES (@accountId, @secret)
      ON CONFLICT (account_id) DO UPDATE SET secret = excluded.secret, last_step = 0, recovery_codes = '[]' WHERE NOT enabled`,
    enable: `UPDATE ${name} SET enabled = 1, last_step = @lastStep, recovery_codes = @codes WHERE account_id = @accountId AND NOT enabled AND secret = @secret`,
    acceptStep: `UPDATE ${name} SET last_step = @step WHERE account_id = @accountId AND enabled AND last_step < @step`,
    // One statement: the condition and the removal see the same row, so of concurrent uses of a code one changes it.
    useRecoveryCode: `UPDATE ${name} SET recovery_codes = (SELECT json_group_array(value) FROM json_each(recovery_codes) WHERE NOT ${USED})
      WHERE account_id = @accountId AND enabled AND EXISTS (SELECT 1 FROM json_each(recovery_codes) WHERE ${USED})`,
    replaceRecoveryCodes: `UPDATE ${name} SET recovery_codes = @codes WHERE account_id = @accountId AND enabled`,
    disable: `DELETE FROM ${name} WHERE account_id = @accountId RETURNING enabled`,
    secrets: `SELECT account_id AS accountId, secret FROM ${name} WHERE account_id > @after ORDER BY account_id LIMIT ${PAGE}`,
    reseal: `UPDATE ${name} SET secret = @resealed WHERE account_id = @accountId AND secret = @secret`
  }
}

const OPTIONS: StoreOptionRules = { database: 'database', table: 'name' }

/** Second factors in SQLite. Each call is one statement whose condition and change see the same row. */
export class SqliteMfaStore implements MfaStore {
  readonly #sql: Prepared<typeof mfaStatements>

  constructor (options: SqliteMfaStoreOptions) {
    checkStoreOptions('SqliteMfaStore', options, OPTIONS)
    markProcessLocal(this)
    const { database, table = 'auth_mfa' } = options
    this.#sql = prepareAll('SqliteMfaStore', database, mfaStatements(quoteName(table)))
  }

  async get (accountId: string): Promise<StoredMfa | null> {
    const row = one(this.#sql.get, { accountId })
    return row === undefined ? null : { secret: row.secret, enabled: row.enabled === 1, lastStep: row.lastStep, recoveryCodes: JSON.parse(row.recoveryCodes) }
  }

  async begin (accountId: string, secret: string): Promise<boolean> {
    return this.#sql.begin.run({ accountId, secret }).changes > 0
  }

  async enable (accountId: string, secret: string, lastStep: number, recoveryCodes: string[]): Promise<boolean> {
    return this.#sql.enable.run({ accountId, secret, lastStep, codes: JSON.stringify(recoveryCodes) }).changes > 0
  }

  async acceptStep (accountId: string, step: number): Promise<boolean> {
    return this.#sql.acceptStep.run({ accountId, step }).changes > 0
  }

  async useRecoveryCode (accountId: string, hashes: string[]): Promise<boolean> {
    return this.#sql.useRecoveryCode.run({ accountId, hashes: JSON.stringify(hashes) }).changes > 0
  }

  async replaceRecoveryCodes (accountId: string, recoveryCodes: string[]): Promise<boolean> {
    return this.#sql.replaceRecoveryCodes.run({ accountId, codes: JSON.stringify(recoveryCodes) }).changes > 0
  }

  async disable (accountId: string): Promise<boolean> {
    return one(this.#sql.disable, { accountId })?.enabled === 1
  }

  async * secrets (): AsyncIterable<{ accountId: string, secret: string }> {
    // Pages in account order, each after the last one listed: no statement stays open between pages.
    let after = ''
    for (;;) {
      const rows = many(this.#sql.secrets, { after }) as Array<{ accountId: string, secret: string }>
      yield * rows
      if (rows.length < PAGE) return
      after = rows[rows.length - 1]!.accountId
    }
  }

  async reseal (accountId: string, secret: string, resealed: string): Promise<boolean> {
    return this.#sql.reseal.run({ accountId, secret, resealed }).changes > 0
  }
}
