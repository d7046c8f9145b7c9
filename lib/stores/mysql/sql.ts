/**
 * What the MySQL stores need of a `mysql2/promise` Pool: parameterised statements (`execute`, prepared once per
 * connection) and connections for transactions. Structural, so the package's declarations do not depend on mysql2's.
 */
export interface MysqlConnection {
  execute: (sql: string, values?: any[]) => Promise<[any, unknown]>
  query: (sql: string) => Promise<unknown>
  release: () => void
  /** Drops the connection instead of returning it to the pool (one whose ROLLBACK failed is in an unknown state). */
  destroy?: () => void
}

export interface MysqlPool {
  execute: (sql: string, values?: any[]) => Promise<[any, unknown]>
  /** Text protocol: for the DDL, which the prepared-statement protocol does not take everywhere. */
  query: (sql: string) => Promise<unknown>
  getConnection: () => Promise<MysqlConnection>
}

/** The part of mysql2's ResultSetHeader the stores read (rows matched, with mysql2's default FOUND_ROWS flag). */
export interface Written { affectedRows: number, insertId?: number | string }

export type Row = Record<string, any>

/** Quotes one identifier (a column, an alias): any text is taken literally. */
export function quoteIdentifier (name: string): string {
  return `\`${name.replaceAll('`', '``')}\``
}

/** Quotes a table name, or a dotted `database.table` name part by part. */
export function quoteName (name: string): string {
  if (typeof name !== 'string' || name === '' || name.split('.').some((part) => part === '')) {
    throw new TypeError(`Invalid MySQL table name: ${JSON.stringify(name)}`)
  }
  return name.split('.').map(quoteIdentifier).join('.')
}

/**
 * Every table: InnoDB (row locks and transactions), and binary collation, so ids, hashes and keys compare exactly
 * (the server's default `_ci` collations would take `Ab` and `aB` for one session id).
 */
export const TABLE_OPTIONS = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin'

/** One script's statements (each DDL script ends its statements with `;` at the end of a line). */
export function statementsOf (script: string): string[] {
  return script.split(/;\n/).map((statement) => statement.trim().replace(/;$/, '')).filter((statement) => statement !== '')
}

/** `IN (?, ?, …)` for `count` values (at least one). */
export const placeholders = (count: number): string => `(${Array.from({ length: count }, () => '?').join(', ')})`

/** Rows of a SELECT. */
export async function rows (on: MysqlPool | MysqlConnection, sql: string, values: unknown[]): Promise<Row[]> {
  const [result] = await on.execute(sql, values)
  return result as Row[]
}

/** The rows an INSERT, UPDATE or DELETE matched. */
export async function written (on: MysqlPool | MysqlConnection, sql: string, values: unknown[]): Promise<number> {
  const [result] = await on.execute(sql, values)
  return (result as Written).affectedRows
}

/** MySQL's error numbers the stores act on. */
export const ER_DUP_ENTRY = 1062
const ER_LOCK_DEADLOCK = 1213
const ATTEMPTS = 5

export const errno = (err: unknown): number | undefined => (err as { errno?: number } | null)?.errno

/**
 * Runs `fn` in one transaction on a connection of its own, at the server's isolation (InnoDB's REPEATABLE READ):
 * the reads that decide are locking reads (`FOR UPDATE`), which see the latest committed rows and hold them until
 * COMMIT, so concurrent callers on one row are serialised. InnoDB ends a deadlock by rolling one transaction back;
 * that one is run again (a few times), as MySQL's manual advises.
 */
export async function transaction<R> (pool: MysqlPool, fn: (connection: MysqlConnection) => Promise<R>): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    const connection = await pool.getConnection()
    let healthy = true
    try {
      await connection.query('START TRANSACTION')
      const result = await fn(connection)
      await connection.query('COMMIT')
      return result
    } catch (err) {
      await connection.query('ROLLBACK').catch(() => { healthy = false })
      if (errno(err) !== ER_LOCK_DEADLOCK || attempt >= ATTEMPTS) throw err
    } finally {
      if (healthy || connection.destroy === undefined) connection.release()
      else connection.destroy()
    }
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt))
  }
}

/** Numbers as numbers, whatever the pool's `supportBigNumbers` / `bigNumberStrings` / `decimalNumbers` options. */
export const num = (value: unknown): number => Number(value)

/** Booleans read from TINYINT(1) columns (0/1, or strings with some pool options). */
export const bool = (value: unknown): boolean => Number(value) === 1

export { pruneNowAndThen } from '../sql/prune.js'
