import { isObject } from '../../common/option-rules.js'
import type { SqlAccountColumns, SqlAccountMapping, SqlIdType } from './account-options.js'

/** How a dialect names itself in errors and quotes its identifiers. */
export interface SqlQuoting {
  dialect: string
  /** One identifier (a column, an alias), taken literally. */
  identifier: (name: string) => string
  /** A table name, dotted parts quoted one by one. */
  name: (name: string) => string
}

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
  idType: SqlIdType
  /** [quoted column, field name] pairs. */
  fields: Array<[string, string]>
  /** The dialect's identifier quoting, for columns named at run time (`createColumns`). */
  quote: (name: string) => string
}

const DEFAULT_COLUMNS: Required<SqlAccountColumns> = {
  id: 'id',
  email: 'email',
  passwordHash: 'password_hash',
  active: 'active',
  credentialVersion: 'credential_version'
}
const ID_TYPES: readonly SqlIdType[] = ['uuid', 'bigint', 'integer', 'text']
/** Names `request.account` already uses: a field of your own cannot take them. */
const RESERVED_FIELDS = new Set(['id', 'email', 'active', 'credentialVersion', 'passwordHash'])

/** Checks a mapping (throwing a TypeError that names the option) and quotes every identifier in it. */
export function resolveAccountMapping (
  quoting: SqlQuoting,
  { table = 'auth_accounts', columns = {}, idType = 'uuid', activeCondition }: SqlAccountMapping,
  fields: Record<string, unknown> = {}
): AccountMapping {
  const fail = (message: string): never => { throw new TypeError(`${quoting.dialect} account mapping: ${message}`) }
  const columnName = (value: unknown, option: string): string => {
    if (typeof value !== 'string' || value === '') fail(`"${option}" must be a column name (a non-empty string), got ${JSON.stringify(value)}`)
    return quoting.identifier(value as string)
  }
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
  const column = (key: keyof SqlAccountColumns): string => columnName(columns[key] ?? DEFAULT_COLUMNS[key], `columns.${key}`)
  return {
    table: quoting.name(table),
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
    }),
    quote: quoting.identifier
  }
}
