import { isObject } from '../../common/option-rules.js'
import type { AccountFields } from '../types.js'
import { quoteIdentifier, quoteName } from './sql.js'

/**
 * The SQL type of the id column. The plugin's ids are strings; an id of another shape is just unknown. `bigint` takes
 * signed and unsigned (Laravel's `bigIncrements`, Rails' `bigint` ids); `uuid` is a CHAR(36) column.
 */
export type MysqlIdType = 'uuid' | 'bigint' | 'integer' | 'text'

/** Column names of the table's own (each defaults to the plugin's table: id, email, password_hash…). */
export interface MysqlAccountColumns {
  id?: string
  email?: string
  passwordHash?: string
  /** A boolean (TINYINT(1)) column. Leave it out and give `activeCondition` when "active" is a condition instead. */
  active?: string
  /** An integer column, `NOT NULL DEFAULT 0` (see example/docs/mysql.md for the ALTER TABLE). */
  credentialVersion?: string
}

/** Where the store finds accounts: the plugin's own table by default, or a table your application already has. */
export interface MysqlAccountMapping {
  /** Table name, optionally `database.table` (default 'auth_accounts'). */
  table?: string
  columns?: MysqlAccountColumns
  /** Default 'uuid'. */
  idType?: MysqlIdType
  /**
   * An SQL condition true for active accounts (e.g. `deleted_at IS NULL AND NOT banned`), instead of a
   * boolean column. Trusted SQL from your code, pasted into the queries as is: never build it from user input.
   */
  activeCondition?: string
}

/** Your own fields of PasswordAuthAccount (declaration merging), each mapped to the column it is read from. */
export type MysqlAccountFieldColumns = { [K in keyof AccountFields]: string }

/** A mapping checked and turned into quoted SQL fragments. */
export interface AccountMapping {
  table: string
  /** The table name as given, for naming the trigger beside it. */
  tableName: string
  id: string
  email: string
  passwordHash: string
  credentialVersion: string
  /** The quoted boolean column, or undefined when "active" is a condition. */
  activeColumn: string | undefined
  /** An SQL expression: the column, or the condition in parentheses. */
  active: string
  idType: MysqlIdType
  /** [quoted column, field name] pairs. */
  fields: Array<[string, string]>
}

const DEFAULT_COLUMNS: Required<MysqlAccountColumns> = {
  id: 'id',
  email: 'email',
  passwordHash: 'password_hash',
  active: 'active',
  credentialVersion: 'credential_version'
}
const ID_TYPES: readonly MysqlIdType[] = ['uuid', 'bigint', 'integer', 'text']
/** Names `request.account` already uses: a field of your own cannot take them. */
const RESERVED_FIELDS = new Set(['id', 'email', 'active', 'credentialVersion', 'passwordHash'])

function fail (message: string): never {
  throw new TypeError(`MySQL account mapping: ${message}`)
}

function columnName (value: unknown, option: string): string {
  if (typeof value !== 'string' || value === '') fail(`"${option}" must be a column name (a non-empty string), got ${JSON.stringify(value)}`)
  return quoteIdentifier(value)
}

/** Checks a mapping (throwing a TypeError that names the option) and quotes every identifier in it. */
export function resolveAccountMapping (
  { table = 'auth_accounts', columns = {}, idType = 'uuid', activeCondition }: MysqlAccountMapping,
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
  const column = (key: keyof MysqlAccountColumns): string => columnName(columns[key] ?? DEFAULT_COLUMNS[key], `columns.${key}`)
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
      return [columnName(value, `fields.${field}`), field]
    })
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const WHOLE_NUMBER = /^-?[0-9]{1,20}$/
/** [lowest, highest + 1]: signed or unsigned, whichever the column is. */
const INTEGER_RANGES = { integer: [-(2n ** 31n), 2n ** 32n], bigint: [-(2n ** 63n), 2n ** 64n] } as const

/**
 * Whether `id` can be a value of the id column. Checked before querying, so an id of another shape
 * answers "unknown" without a round trip and without MySQL comparing it loosely (`'12abc'` = 12).
 */
export function isIdOfType (id: string, idType: MysqlIdType): boolean {
  if (typeof id !== 'string') return false
  switch (idType) {
    case 'uuid': return UUID.test(id)
    case 'text': return id !== '' && !id.includes('\0')
    default: {
      if (!WHOLE_NUMBER.test(id)) return false
      const [lowest, limit] = INTEGER_RANGES[idType]
      const value = BigInt(id)
      return value >= lowest && value < limit
    }
  }
}

/** The id as a statement compares it: whole numbers exactly (a string against an integer column compares as a double). */
export function idPlaceholder (idType: MysqlIdType): string {
  return idType === 'bigint' || idType === 'integer' ? 'CAST(? AS DECIMAL(20, 0))' : '?'
}
