import { prepare, quoteName, type PostgresConnection, type Queryable, type Statement } from './sql.js'
import type { MfaStore, StoredMfa } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface PostgresMfaStoreOptions extends PostgresConnection {
  /** Table name, optionally schema-qualified (default 'auth_mfa'). */
  table?: string
}

/** The DDL of the second-factor table: one row per account, the secret sealed and the recovery codes hashed. */
export function mfaTableSql (table = 'auth_mfa'): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteName(table)} (
  account_id text PRIMARY KEY,
  secret text NOT NULL,
  enabled boolean NOT NULL DEFAULT false,
  last_step bigint NOT NULL DEFAULT 0,
  recovery_codes text[] NOT NULL DEFAULT '{}'
);`
}

const PAGE = 500

const OPTIONS: StoreOptionRules = { pool: 'pool', preparedStatements: 'boolean', table: 'name' }

/**
 * Second factors in PostgreSQL. Each call is one statement, and each update re-checks its condition on
 * the row it locked, so of concurrent uses of one step or one recovery code exactly one changes the row.
 */
export class PostgresMfaStore implements MfaStore {
  readonly #pool: Queryable
  readonly #sql: Record<'get' | 'begin' | 'enable' | 'acceptStep' | 'useRecoveryCode' | 'replaceRecoveryCodes' | 'disable' | 'secrets' | 'reseal', Statement>

  constructor (options: PostgresMfaStoreOptions) {
    checkStoreOptions('PostgresMfaStore', options, OPTIONS)
    const { pool, preparedStatements = true, table = 'auth_mfa' } = options
    const name = quoteName(table)
    this.#pool = pool
    this.#sql = prepare({
      get: `SELECT secret, enabled, last_step::float8 AS "lastStep", recovery_codes AS "recoveryCodes" FROM ${name} WHERE account_id = $1`,
      begin: `INSERT INTO ${name} AS t (account_id, secret) VALUES ($1, $2)
        ON CONFLICT (account_id) DO UPDATE SET secret = EXCLUDED.secret, last_step = 0, recovery_codes = '{}' WHERE NOT t.enabled RETURNING 1`,
      enable: `UPDATE ${name} SET enabled = true, last_step = $3, recovery_codes = $4 WHERE account_id = $1 AND NOT enabled AND secret = $2 RETURNING 1`,
      acceptStep: `UPDATE ${name} SET last_step = $2 WHERE account_id = $1 AND enabled AND last_step < $2 RETURNING 1`,
      useRecoveryCode: `UPDATE ${name} SET recovery_codes = ARRAY(SELECT code FROM unnest(recovery_codes) AS code WHERE code <> ALL($2::text[]))
        WHERE account_id = $1 AND enabled AND recovery_codes && $2::text[] RETURNING 1`,
      replaceRecoveryCodes: `UPDATE ${name} SET recovery_codes = $2 WHERE account_id = $1 AND enabled RETURNING 1`,
      disable: `DELETE FROM ${name} WHERE account_id = $1 RETURNING enabled`,
      secrets: `SELECT account_id AS "accountId", secret FROM ${name} WHERE account_id > $1 ORDER BY account_id LIMIT ${PAGE}`,
      reseal: `UPDATE ${name} SET secret = $3 WHERE account_id = $1 AND secret = $2 RETURNING 1`
    }, preparedStatements)
  }

  async get (accountId: string): Promise<StoredMfa | null> {
    return (await this.#pool.query({ ...this.#sql.get, values: [accountId] })).rows[0] ?? null
  }

  async begin (accountId: string, secret: string): Promise<boolean> {
    return await this.#changed('begin', accountId, secret)
  }

  async enable (accountId: string, secret: string, lastStep: number, recoveryCodes: string[]): Promise<boolean> {
    return await this.#changed('enable', accountId, secret, lastStep, recoveryCodes)
  }

  async acceptStep (accountId: string, step: number): Promise<boolean> {
    return await this.#changed('acceptStep', accountId, step)
  }

  async useRecoveryCode (accountId: string, hashes: string[]): Promise<boolean> {
    return await this.#changed('useRecoveryCode', accountId, hashes)
  }

  async replaceRecoveryCodes (accountId: string, recoveryCodes: string[]): Promise<boolean> {
    return await this.#changed('replaceRecoveryCodes', accountId, recoveryCodes)
  }

  async disable (accountId: string): Promise<boolean> {
    return (await this.#pool.query({ ...this.#sql.disable, values: [accountId] })).rows[0]?.enabled === true
  }

  async * secrets (): AsyncIterable<{ accountId: string, secret: string }> {
    // Pages in account order, each after the last one listed: no cursor is held between pages.
    let after = ''
    for (;;) {
      const { rows } = await this.#pool.query({ ...this.#sql.secrets, values: [after] })
      yield * rows as Array<{ accountId: string, secret: string }>
      if (rows.length < PAGE) return
      after = rows[rows.length - 1].accountId
    }
  }

  async reseal (accountId: string, secret: string, resealed: string): Promise<boolean> {
    return await this.#changed('reseal', accountId, secret, resealed)
  }

  async #changed (statement: 'begin' | 'enable' | 'acceptStep' | 'useRecoveryCode' | 'replaceRecoveryCodes' | 'reseal', ...values: unknown[]): Promise<boolean> {
    return ((await this.#pool.query({ ...this.#sql[statement], values })).rowCount ?? 0) > 0
  }
}
