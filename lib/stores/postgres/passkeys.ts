import { baseName, prepare, quoteName, siblingName, type PostgresConnection, type Queryable, type Statement } from './sql.js'
import type { PasskeyAddResult, PasskeyStore, StoredPasskey } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface PostgresPasskeyStoreOptions extends PostgresConnection {
  /**
   * Table name, optionally schema-qualified (default 'auth_passkeys'); the user handles live in `<table>_handles`,
   * the accounts' generations in `<table>_generations`.
   */
  table?: string
}

/**
 * The DDL of the passkey tables: one row per credential (public key, counter, flags, name, times: nothing
 * that signs in), one row per account's user handle, one per account's generation (from its first removeAll),
 * and the functions that add a passkey under the account's limit and generation, remove them all (advancing the
 * generation) and forget an account. The three take the account's advisory lock first, so each sees what the
 * one before it committed.
 */
export function passkeysTableSql (table = 'auth_passkeys'): string {
  const name = quoteName(table)
  const generations = siblingName(table, 'generations')
  const lock = `PERFORM pg_advisory_xact_lock(hashtext(${literal(table)}), hashtext(p_account));`
  return `CREATE TABLE IF NOT EXISTS ${name} (
  credential_id text PRIMARY KEY,
  account_id text NOT NULL,
  public_key text NOT NULL,
  counter bigint NOT NULL DEFAULT 0,
  backup_eligible boolean NOT NULL,
  backed_up boolean NOT NULL,
  transports text[] NOT NULL DEFAULT '{}',
  name text NOT NULL,
  created_at float8 NOT NULL,
  last_used_at float8
);
CREATE INDEX IF NOT EXISTS ${quoteName(`${baseName(table)}_account_idx`)} ON ${name} (account_id, created_at);
CREATE TABLE IF NOT EXISTS ${quoteName(`${table}_handles`)} (
  account_id text PRIMARY KEY,
  handle text NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS ${generations} (
  account_id text PRIMARY KEY,
  generation bigint NOT NULL
);
CREATE OR REPLACE FUNCTION ${siblingName(table, 'add')}(p_id text, p_account text, p_public_key text, p_counter bigint, p_be boolean, p_bs boolean,
  p_transports text[], p_name text, p_created float8, p_max integer, p_generation bigint)
RETURNS text LANGUAGE plpgsql AS $add$
BEGIN
  -- One add or removal per account at a time, so the generation and the count below stay true until the insert.
  ${lock}
  IF coalesce((SELECT generation FROM ${generations} WHERE account_id = p_account), 0) <> p_generation THEN RETURN 'outrun'; END IF;
  IF EXISTS (SELECT 1 FROM ${name} WHERE credential_id = p_id) THEN RETURN 'duplicate'; END IF;
  IF (SELECT count(*) FROM ${name} WHERE account_id = p_account) >= p_max THEN RETURN 'limit'; END IF;
  INSERT INTO ${name} (credential_id, account_id, public_key, counter, backup_eligible, backed_up, transports, name, created_at)
    VALUES (p_id, p_account, p_public_key, p_counter, p_be, p_bs, p_transports, p_name, p_created) ON CONFLICT (credential_id) DO NOTHING;
  IF NOT FOUND THEN RETURN 'duplicate'; END IF;
  RETURN 'added';
END
$add$;
CREATE OR REPLACE FUNCTION ${siblingName(table, 'remove_all')}(p_account text)
RETURNS integer LANGUAGE plpgsql AS $remove_all$
DECLARE removed integer;
BEGIN
  ${lock}
  INSERT INTO ${generations} AS g (account_id, generation) VALUES (p_account, 1)
    ON CONFLICT (account_id) DO UPDATE SET generation = g.generation + 1;
  DELETE FROM ${name} WHERE account_id = p_account;
  GET DIAGNOSTICS removed = ROW_COUNT;
  RETURN removed;
END
$remove_all$;
CREATE OR REPLACE FUNCTION ${siblingName(table, 'forget')}(p_account text)
RETURNS integer LANGUAGE plpgsql AS $forget$
DECLARE removed integer;
BEGIN
  ${lock}
  DELETE FROM ${name} WHERE account_id = p_account;
  GET DIAGNOSTICS removed = ROW_COUNT;
  DELETE FROM ${quoteName(`${table}_handles`)} WHERE account_id = p_account;
  DELETE FROM ${generations} WHERE account_id = p_account;
  RETURN removed;
END
$forget$;`
}

const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`

const COLUMNS = `credential_id AS id, account_id AS "accountId", public_key AS "publicKey", counter::float8 AS counter, backup_eligible AS "backupEligible",
  backed_up AS "backedUp", transports, name, created_at AS "createdAt", last_used_at AS "lastUsedAt"`

type Name = 'userHandle' | 'generation' | 'add' | 'get' | 'list' | 'use' | 'remove' | 'removeAll' | 'forget'

const OPTIONS: StoreOptionRules = { pool: 'pool', preparedStatements: 'boolean', table: 'name' }

/**
 * Passkeys in PostgreSQL. Each call is one statement: a credential id is the primary key (unique across
 * accounts), an add takes the account's advisory lock before reading its generation and counting (as a
 * removal of all takes it before advancing the generation), and a use updates the row only if its counter is
 * still the expected one.
 */
export class PostgresPasskeyStore implements PasskeyStore {
  readonly #pool: Queryable
  readonly #sql: Record<Name, Statement>

  constructor (options: PostgresPasskeyStoreOptions) {
    checkStoreOptions('PostgresPasskeyStore', options, OPTIONS)
    const { pool, preparedStatements = true, table = 'auth_passkeys' } = options
    const name = quoteName(table)
    const handles = quoteName(`${table}_handles`)
    this.#pool = pool
    this.#sql = prepare({
      // DO UPDATE (to the same value) returns the stored handle even when a concurrent insert won.
      userHandle: `INSERT INTO ${handles} AS h (account_id, handle) VALUES ($1, $2)
        ON CONFLICT (account_id) DO UPDATE SET handle = h.handle RETURNING handle`,
      generation: `SELECT generation::float8 AS generation FROM ${siblingName(table, 'generations')} WHERE account_id = $1`,
      add: `SELECT ${siblingName(table, 'add')}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) AS result`,
      get: `SELECT ${COLUMNS} FROM ${name} WHERE credential_id = $1`,
      list: `SELECT ${COLUMNS} FROM ${name} WHERE account_id = $1 ORDER BY created_at, credential_id`,
      use: `UPDATE ${name} SET counter = $3, backed_up = $4, last_used_at = $5 WHERE credential_id = $1 AND counter = $2 RETURNING 1`,
      remove: `DELETE FROM ${name} WHERE account_id = $1 AND credential_id = $2 RETURNING 1`,
      removeAll: `SELECT ${siblingName(table, 'remove_all')}($1) AS removed`,
      forget: `SELECT ${siblingName(table, 'forget')}($1) AS removed`
    }, preparedStatements)
  }

  async userHandle (accountId: string, candidate: string): Promise<string> {
    return (await this.#query('userHandle', accountId, candidate)).rows[0].handle
  }

  async generation (accountId: string): Promise<number> {
    return (await this.#query('generation', accountId)).rows[0]?.generation ?? 0
  }

  async add (passkey: StoredPasskey, max: number, generation: number): Promise<PasskeyAddResult> {
    const { id, accountId, publicKey, counter, backupEligible, backedUp, transports, name, createdAt } = passkey
    return (await this.#query('add', id, accountId, publicKey, counter, backupEligible, backedUp, transports, name, createdAt, max, generation)).rows[0].result
  }

  async get (credentialId: string): Promise<StoredPasskey | null> {
    return (await this.#query('get', credentialId)).rows[0] ?? null
  }

  async list (accountId: string): Promise<StoredPasskey[]> {
    return (await this.#query('list', accountId)).rows
  }

  async use (credentialId: string, expectedCounter: number, counter: number, backedUp: boolean, usedAt: number): Promise<boolean> {
    return ((await this.#query('use', credentialId, expectedCounter, counter, backedUp, usedAt)).rowCount ?? 0) > 0
  }

  async remove (accountId: string, credentialId: string): Promise<boolean> {
    return ((await this.#query('remove', accountId, credentialId)).rowCount ?? 0) > 0
  }

  async removeAll (accountId: string): Promise<number> {
    return (await this.#query('removeAll', accountId)).rows[0].removed
  }

  async forget (accountId: string): Promise<number> {
    return (await this.#query('forget', accountId)).rows[0].removed
  }

  async #query (statement: Name, ...values: unknown[]) {
    return await this.#pool.query({ ...this.#sql[statement], values })
  }
}
