import type { AccountFields, NewAccountRecord } from '../types.js'

/**
 * The SQL type of the id column. The plugin's ids are strings; an id of another shape is just unknown. On MySQL,
 * `bigint` takes signed and unsigned (Laravel's `bigIncrements`, Rails' `bigint` ids) and `uuid` is a CHAR(36) column.
 */
export type SqlIdType = 'uuid' | 'bigint' | 'integer' | 'text'

/** Column names of the table's own (each defaults to the plugin's table: id, email, password_hash…). */
export interface SqlAccountColumns {
  id?: string
  email?: string
  passwordHash?: string
  /** A boolean column (TINYINT(1) on MySQL). Leave it out and give `activeCondition` when "active" is a condition instead. */
  active?: string
  /** An integer column, `NOT NULL DEFAULT 0` (see the README, or example/docs/mysql.md, for the ALTER TABLE). */
  credentialVersion?: string
}

/** Where the store finds accounts: the plugin's own table by default, or a table your application already has. */
export interface SqlAccountMapping {
  /** Table name (default 'auth_accounts'), optionally qualified: `schema.table` on PostgreSQL, `database.table` on MySQL. */
  table?: string
  columns?: SqlAccountColumns
  /** Default 'uuid'. */
  idType?: SqlIdType
  /**
   * An SQL condition true for active accounts (e.g. `deleted_at IS NULL AND NOT banned`), instead of a
   * boolean column. Trusted SQL from your code, pasted into the queries as is: never build it from user input.
   */
  activeCondition?: string
}

/** Your own fields of PasswordAuthAccount (declaration merging), each mapped to the column it is read from. */
export type SqlAccountFieldColumns = { [K in keyof AccountFields]: string }

/** `fields` is required once PasswordAuthAccount has a required field of your own. */
type FieldsOption = Partial<SqlAccountFieldColumns> extends SqlAccountFieldColumns
  ? { fields?: SqlAccountFieldColumns }
  : { fields: SqlAccountFieldColumns }

/** Values for columns of yours the plugin does not know, keyed by column name. */
export type CreateColumns = (account: NewAccountRecord) => Record<string, unknown>

/** An account store's options beside its connection. */
export type SqlAccountOptions = SqlAccountMapping & FieldsOption & {
  /**
   * Registration (create(); on MySQL add() too, called with no fields): values for columns of yours the plugin does
   * not know, keyed by column name, e.g. a Django table's `username` and `date_joined`, a Laravel table's `name` or a
   * Rails table's `created_at` and `updated_at`. Columns it leaves out take their defaults; a column that `fields`
   * maps a registration field to keeps that field's value.
   */
  createColumns?: CreateColumns
}

/** An account the host adds itself (a seed, an admin tool). */
export interface NewSqlAccount {
  email: string
  passwordHash: string
  id?: string
  active?: boolean
}
