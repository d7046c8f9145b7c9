import { normalizeEmail } from '../email.js'
import type { NewAccountRecord } from '../types.js'
import type { AccountMapping } from './account-mapping.js'
import type { CreateColumns, NewSqlAccount, SqlIdType } from './account-options.js'

/** A column, quoted, and the value an INSERT gives it. */
export type ColumnValue = [string, unknown]

/**
 * The columns of a new account's INSERT: e-mail (trimmed, lower-cased), hash, `active` (as the dialect writes a
 * true boolean) when it is a column, the registration's fields in the columns `fields` maps them to, then
 * `createColumns`' values (a column a registration field already fills keeps the field's value).
 */
export function accountColumns (m: AccountMapping, account: NewAccountRecord, active: unknown, createColumns: CreateColumns | undefined): ColumnValue[] {
  const columns: ColumnValue[] = [[m.email, normalizeEmail(account.email)], [m.passwordHash, account.passwordHash]]
  if (m.activeColumn !== undefined) columns.push([m.activeColumn, active])
  for (const [column, field] of m.fields) {
    if (Object.hasOwn(account.fields, field)) columns.push([column, account.fields[field]])
  }
  for (const [name, value] of Object.entries(createColumns?.(account) ?? {})) {
    const column = m.quote(name)
    if (!columns.some(([taken]) => taken === column)) columns.push([column, value])
  }
  return columns
}

/** Refuses what add() cannot store: an id the column cannot hold, or `active` where "active" is a condition. */
export function checkNewAccount (store: string, m: AccountMapping, account: NewSqlAccount, isIdOfType: (id: string, idType: SqlIdType) => boolean): void {
  if (account.id !== undefined && !isIdOfType(account.id, m.idType)) {
    throw new TypeError(`${store}: id ${JSON.stringify(account.id)} is not a valid ${m.idType}`)
  }
  if (m.activeColumn === undefined && account.active !== undefined) {
    throw new TypeError(`${store}: with an "activeCondition", add() cannot set "active"; write your own columns instead`)
  }
}
