import type { SqlIdType } from './account-options.js'

/** What the id column of a dialect takes, beside UUIDs. */
export interface IdRules {
  /** The most digits a whole-number id has (a sign aside). */
  digits: number
  /** [lowest, highest + 1] of each integer type. */
  ranges: Record<'integer' | 'bigint', readonly [bigint, bigint]>
  /** Whether a text id may be empty. */
  emptyText: boolean
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Whether `id` can be a value of the id column, by a dialect's rules. Checked before querying, so an id of another
 * shape answers "unknown" without a round trip and without an error or a loose comparison from the database.
 */
export function idCheck ({ digits, ranges, emptyText }: IdRules): (id: string, idType: SqlIdType) => boolean {
  const wholeNumber = new RegExp(`^-?[0-9]{1,${digits}}$`)
  return (id, idType) => {
    if (typeof id !== 'string') return false
    switch (idType) {
      case 'uuid': return UUID.test(id)
      case 'text': return (emptyText || id !== '') && !id.includes('\0')
      default: {
        if (!wholeNumber.test(id)) return false
        const [lowest, limit] = ranges[idType]
        const value = BigInt(id)
        return value >= lowest && value < limit
      }
    }
  }
}
