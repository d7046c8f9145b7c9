import { idCheck } from '../sql/account-ids.js'
import { resolveAccountMapping as resolve, type AccountMapping } from '../sql/account-mapping.js'
import type { SqlAccountMapping } from '../sql/account-options.js'
import { quoteIdentifier, quoteName } from './sql.js'

const QUOTING = { dialect: 'PostgreSQL', identifier: quoteIdentifier, name: quoteName }

/** Checks a mapping (throwing a TypeError that names the option) and quotes every identifier in it. */
export const resolveAccountMapping = (mapping: SqlAccountMapping, fields?: Record<string, unknown>): AccountMapping =>
  resolve(QUOTING, mapping, fields)

/** Whether `id` can be a value of the id column (PostgreSQL's text holds no NUL; its integers are signed). */
export const isIdOfType = idCheck({ digits: 19, ranges: { integer: [-(2n ** 31n), 2n ** 31n], bigint: [-(2n ** 63n), 2n ** 63n] }, emptyText: true })
