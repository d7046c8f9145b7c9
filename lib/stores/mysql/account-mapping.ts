import { idCheck } from '../sql/account-ids.js'
import { resolveAccountMapping as resolve, type AccountMapping } from '../sql/account-mapping.js'
import type { SqlAccountMapping, SqlIdType } from '../sql/account-options.js'
import { quoteIdentifier, quoteName } from './sql.js'

const QUOTING = { dialect: 'MySQL', identifier: quoteIdentifier, name: quoteName }

/** Checks a mapping (throwing a TypeError that names the option) and quotes every identifier in it. */
export const resolveAccountMapping = (mapping: SqlAccountMapping, fields?: Record<string, unknown>): AccountMapping =>
  resolve(QUOTING, mapping, fields)

/**
 * Whether `id` can be a value of the id column: signed or unsigned integers, whichever the column is, and no empty
 * text (so MySQL never compares loosely: `'12abc'` = 12).
 */
export const isIdOfType = idCheck({ digits: 20, ranges: { integer: [-(2n ** 31n), 2n ** 32n], bigint: [-(2n ** 63n), 2n ** 64n] }, emptyText: false })

/** The id as a statement compares it: whole numbers exactly (a string against an integer column compares as a double). */
export function idPlaceholder (idType: SqlIdType): string {
  return idType === 'bigint' || idType === 'integer' ? 'CAST(? AS DECIMAL(20, 0))' : '?'
}
