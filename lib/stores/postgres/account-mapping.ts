import { idCheck } from '../sql/account-ids.js'
import {
  resolveAccountMapping as resolve, type AccountMapping, type SqlAccountColumns, type SqlAccountFieldColumns, type SqlAccountMapping, type SqlIdType
} from '../sql/account-mapping.js'
import { quoteIdentifier, quoteName } from './sql.js'

export type { AccountMapping } from '../sql/account-mapping.js'
export type PostgresIdType = SqlIdType
export type PostgresAccountColumns = SqlAccountColumns
export type PostgresAccountMapping = SqlAccountMapping
export type PostgresAccountFieldColumns = SqlAccountFieldColumns

const QUOTING = { dialect: 'PostgreSQL', identifier: quoteIdentifier, name: quoteName }

/** Checks a mapping (throwing a TypeError that names the option) and quotes every identifier in it. */
export const resolveAccountMapping = (mapping: PostgresAccountMapping, fields?: Record<string, unknown>): AccountMapping =>
  resolve(QUOTING, mapping, fields)

/** Whether `id` can be a value of the id column (PostgreSQL's text holds no NUL; its integers are signed). */
export const isIdOfType = idCheck({ digits: 19, ranges: { integer: [-(2n ** 31n), 2n ** 31n], bigint: [-(2n ** 63n), 2n ** 63n] }, emptyText: true })
