/**
 * What the SQLite stores need of a `better-sqlite3` Database: prepared statements and transactions. Structural,
 * so the package's declarations do not depend on better-sqlite3's types.
 */
export interface SqliteStatement {
  run: (...params: any[]) => { changes: number }
  get: (...params: any[]) => unknown
  all: (...params: any[]) => unknown[]
}

export interface SqliteDatabase {
  prepare: (source: string) => SqliteStatement
  exec: (source: string) => unknown
  pragma: (source: string, options?: { simple?: boolean }) => unknown
  transaction: (fn: (...args: any[]) => any) => { immediate: (...args: any[]) => any }
}

type Row = Record<string, any>

/** Quotes a table or index name (SQLite has no schemas the stores use: `main.x` is taken as one name). */
export function quoteName (name: string): string {
  if (typeof name !== 'string' || name === '') throw new TypeError(`Invalid SQLite table name: ${JSON.stringify(name)}`)
  return `"${name.replaceAll('"', '""')}"`
}

/** Booleans go in as 0/1 (better-sqlite3 binds no booleans). */
export const bit = (value: boolean | undefined): number => value === true ? 1 : 0

/**
 * Prepares each statement once, when the store is made: a missing table fails there, with its store's name, and not
 * at the first request.
 */
export function prepareAll<K extends string> (store: string, database: SqliteDatabase, statements: Record<K, string>): Record<K, SqliteStatement> {
  const prepared = {} as Record<K, SqliteStatement>
  for (const purpose of Object.keys(statements) as K[]) {
    try {
      prepared[purpose] = database.prepare(statements[purpose])
    } catch (err) {
      throw new Error(`${store}: cannot prepare its statements (${(err as Error).message}); create the tables first with createSqliteSchema(database)`)
    }
  }
  return prepared
}

/**
 * A function run as one `BEGIN IMMEDIATE` transaction: it takes the database's write lock before it reads, so a
 * second connection (another process on the same file) waits (busy_timeout) instead of deciding on the same
 * rows. Made once per store; better-sqlite3 runs it synchronously.
 */
export function immediate<A extends unknown[], R> (database: SqliteDatabase, fn: (...args: A) => R): (...args: A) => R {
  const transaction = database.transaction(fn)
  return (...args: A) => transaction.immediate(...args)
}

export const one = (statement: SqliteStatement, params: object): Row | undefined => statement.get(params) as Row | undefined
export const many = (statement: SqliteStatement, params: object): Row[] => statement.all(params) as Row[]

export { pruneNowAndThen } from '../sql/prune.js'

/** The prepared statements of a store whose SQL `statements(…)` makes. */
export type Prepared<F extends (...args: any[]) => object> = Record<keyof ReturnType<F>, SqliteStatement>
