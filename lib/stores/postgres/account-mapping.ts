import { isObject } from '../../common/option-rules.js'
import type { AccountFields } from '../types.js'
import { quoteIdentifier, quoteName } from './sql.js'

/** The SQL type of the id column. The plugin's ids are strings; an id of another shape is just unknown. */
export type PostgresIdType = 'uuid' | 'bigint' | 'integer' | 'text'

/** Column names of the table's own (each defaults to the plugin's table: id, email, password_hash…). */
export interface PostgresAccountColumns {
  id?: string
  email?: string
  passwordHash?: string
  /** A boolean column. Leave it out and give `activeCondition` when "active" is a condition instead. */
  active?: string
  /** An integer column, `NOT NULL DEFAULT 0` (see the README for the ALTER TABLE). */
  credentialVersion?: string
}

/** Where the store finds accounts: the plugin's own table by default, or a table your application already has. */
export interface PostgresAccountMapping {
  /** Table name, optionally schema-qualified (default 'auth_accounts'). */
  table?: string
  columns?: PostgresAccountColumns
  /** Default 'uuid'. */
  idType?: PostgresIdType
  /**
   * An SQL condition true for active accounts (e.g. `deleted_at IS NULL AND NOT banned`), instead of a
   * boolean column. Trusted SQL from your code, pasted into the queries as is: never build it from user input.
   */
  activeCondition?: string
}

/** Your own fields of PasswordAuthAccount (declaration merging), each mapped to the column it is read from. */
export type PostgresAccountFieldColumns = { [K in keyof AccountFields]: string }

/** A mapping checked and turned into quoted SQL fragments. */
export interface AccountMapping {
  table: string
  /** The table name as given, for naming the objects beside it. */
  tableName: string
  id: string
  email: string
  passwordHash: string
  credentialVersion: string
  /** The quoted boolean column, or undefined when "active" is a condition. */
  activeColumn: string | undefined
  /** An SQL expression: the column, or the condition in parentheses. */
  active: string
  idType: PostgresIdType
  /** [quoted column, quoted field name] pairs. */
  fields: Array<[string, string]>
}

const DEFAULT_COLUMNS: Required<PostgresAccountColumns> = {
  id: 'id',
  email: 'email',
  passwordHash: 'password_hash',
  active: 'active',
  credentialVersion: 'credential_version'
}
const ID_TYPES: readonly PostgresIdType[] = ['uuid', 'bigint', 'integer', 'text']
/** Names `request.account` already uses: a field of your own cannot take them. */
const RESERVED_FIELDS = new Set(['id', 'email', 'active', 'credentialVersion', 'passwordHash'])

function fail (message: string): never {
  throw new TypeError(`PostgreSQL account mapping: ${message}`)
}

function columnName (value: unknown, option: string): string {
  if (typeof value !== 'string' || value === '') fail(`"${option}" must be a column name (a non-empty string), got ${JSON.stringify(value)}`)
  return quoteIdentifier(value)
}

/** Checks a mapping (throwing a TypeError that names the option) and quotes every identifier in it. */
export function resolveAccountMapping (
  { table = 'auth_accounts', columns = {}, idType = 'uuid', activeCondition }: PostgresAccountMapping,
  fields: Record<string, unknown> = {}
): AccountMapping {
  if (!isObject(columns)) fail(`"columns" must be an object of column names, got ${JSON.stringify(columns)}`)
  for (const key of Object.keys(columns)) {
    if (!Object.hasOwn(DEFAULT_COLUMNS, key)) fail(`unknown column "columns.${key}"; known: ${Object.keys(DEFAULT_COLUMNS).join(', ')}`)
  }
  if (!ID_TYPES.includes(idType)) fail(`"idType" must be one of ${ID_TYPES.join(', ')}, got ${JSON.stringify(idType)}`)
  if (activeCondition !== undefined) {
    if (typeof activeCondition !== 'string' || activeCondition.trim() === '') fail(`"activeCondition" must be a non-empty SQL condition, got ${JSON.stringify(activeCondition)}`)
    if (columns.active !== undefined) fail('give either "columns.active" (a boolean column) or "activeCondition" (an SQL condition), not both')
  }
  if (!isObject(fields)) fail(`"fields" must be an object mapping your account fields to column names, got ${JSON.stringify(fields)}`)
  const column = (key: keyof PostgresAccountColumns): string => columnName(columns[key] ?? DEFAULT_COLUMNS[key], `columns.${key}`)
  return {
    table: quoteName(table),
    tableName: table,
    id: column('id'),
    email: column('email'),
    passwordHash: column('passwordHash'),
    credentialVersion: column('credentialVersion'),
    activeColumn: activeCondition === undefined ? column('active') : undefined,
    active: activeCondition === undefined ? column('active') : `(${activeCondition})`,
    idType,
    fields: Object.entries(fields).map(([field, value]) => {
      if (RESERVED_FIELDS.has(field)) fail(`"fields.${field}" is a field of the plugin's own; give your field another name`)
      return [columnName(value, `fields.${field}`), quoteIdentifier(field)]
    })
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const WHOLE_NUMBER = /^-?[0-9]{1,19}$/
const INTEGER_LIMITS = { integer: 2n ** 31n, bigint: 2n ** 63n }

/**
 * Whether `id` can be a value of the id column. Checked before querying, so an id of another shape
 * answers "unknown" without a round trip and without an error from PostgreSQL.
 */
export function isIdOfType (id: string, idType: PostgresIdType): boolean {
  if (typeof id !== 'string') return false
  switch (idType) {
    case 'uuid': return UUID.test(id)
    case 'text': return !id.includes('\0')
    default: {
      if (!WHOLE_NUMBER.test(id)) return false
      const limit = INTEGER_LIMITS[idType]
      const value = BigInt(id)
      return value >= -limit && value < limit
    }
  }
}
