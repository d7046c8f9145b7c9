import { isObject, nearest } from '../common/option-rules.js'

/** A store's options: each name it takes, and what a value must be. */
export type StoreOptionRules = Record<string, 'pool' | 'client' | 'database' | 'mysql' | 'name' | 'prefix' | 'milliseconds' | 'count' | 'function' | 'boolean' | 'any'>

/** Names taken from another backend's stores, pointed at this one's: `client` on a PostgreSQL store means `pool`. */
const OTHER_BACKEND: Record<string, string> = { client: 'pool', redis: 'client', pool: 'client', table: 'prefix', prefix: 'table', db: 'database' }

const DESCRIBE = {
  pool: 'a pg Pool or Client (an object with a query() method)',
  client: 'an ioredis client (new Redis(…) or new Cluster(…)) or a node-redis one (createClient() or createCluster())',
  database: 'a better-sqlite3 Database (new Database(file))',
  mysql: 'a mysql2/promise Pool (mysql.createPool(…) from mysql2/promise; of a callback pool, pass pool.promise())',
  name: 'a table name (optionally schema.table)',
  prefix: 'a string',
  milliseconds: 'a whole number of milliseconds from 1',
  count: 'a whole number from 1',
  function: 'a function',
  boolean: 'true or false'
} as const

function fits (rule: StoreOptionRules[string], value: unknown): boolean {
  switch (rule) {
    case 'pool': return typeof (value as { query?: unknown } | undefined)?.query === 'function'
    case 'client': {
      // ioredis (Redis, Cluster) has defineCommand; node-redis (createClient, createCluster) sendCommand and isOpen.
      const client = value as Record<string, unknown> | null | undefined
      return typeof client?.defineCommand === 'function' || (typeof client?.sendCommand === 'function' && 'isOpen' in client)
    }
    case 'database': return typeof (value as { prepare?: unknown } | undefined)?.prepare === 'function' &&
      typeof (value as { transaction?: unknown }).transaction === 'function'
    case 'mysql': return typeof (value as { execute?: unknown } | undefined)?.execute === 'function' &&
      typeof (value as { getConnection?: unknown }).getConnection === 'function' && typeof (value as { promise?: unknown }).promise !== 'function'
    case 'name': return typeof value === 'string' && value !== ''
    case 'prefix': return typeof value === 'string'
    case 'milliseconds':
    case 'count': return Number.isSafeInteger(value) && (value as number) >= 1
    case 'function': return typeof value === 'function'
    case 'boolean': return typeof value === 'boolean'
    case 'any': return true
  }
}

/**
 * Checks a store's options at construction, so a mistake fails there with the store's name and not as a
 * TypeError at the first request: an unknown name (with the one meant), a missing `pool` or `client`, a
 * value of the wrong kind. A `pool`, `client`, `database` or `mysql` rule is required; the rest may be left out.
 */
export function checkStoreOptions (store: string, options: unknown, rules: StoreOptionRules): void {
  const names = Object.keys(rules)
  const connection = names.find((name) => rules[name] === 'pool' || rules[name] === 'client' || rules[name] === 'database' || rules[name] === 'mysql')
  if (options === undefined) options = {}
  if (connection !== undefined && fits(rules[connection]!, options)) {
    throw new TypeError(`${store}: pass the ${connection} inside the options, new ${store}({ ${connection} }), not as the options`)
  }
  if (!isObject(options)) {
    throw new TypeError(`${store}: the options must be an object${connection === undefined ? '' : `, e.g. new ${store}({ ${connection} })`}`)
  }
  for (const name of Object.keys(options)) {
    if (Object.hasOwn(rules, name)) continue
    const meant = OTHER_BACKEND[name] !== undefined && Object.hasOwn(rules, OTHER_BACKEND[name]) ? OTHER_BACKEND[name] : nearest(name, names)
    throw new TypeError(`${store}: unknown option ${name}: did you mean ${meant}?`)
  }
  for (const name of names) {
    const rule = rules[name]!
    const value = options[name]
    if (rule === 'any' || (value === undefined && name !== connection)) continue
    if (!fits(rule, value)) {
      throw new TypeError(`${store}: "${name}" must be ${DESCRIBE[rule]}, got ${value === undefined ? 'nothing' : typeof value === 'string' ? JSON.stringify(value) : typeof value}`)
    }
  }
}
