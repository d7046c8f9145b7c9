/** What the PostgreSQL stores need of a `pg` Pool (or Client): named, parameterised queries. */
export interface Queryable {
  query: (config: { name?: string, text: string, values?: unknown[] }) => Promise<{ rows: any[], rowCount: number | null }>
}

/** What every PostgreSQL store takes to reach the database. */
export interface PostgresConnection {
  /** Your `pg` Pool; the store never connects or ends it. */
  pool: Queryable
  /**
   * Named prepared statements, parsed once per connection (default true). Pass false behind a transaction
   * pooler (PgBouncer before 1.21 in transaction mode, Supavisor, a serverless pooler), where they break.
   */
  preparedStatements?: boolean
}

/** Quotes one identifier (a column, an alias): any text is taken literally. */
export function quoteIdentifier (name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** Quotes a table name, or a dotted `schema.table` name part by part. */
export function quoteName (name: string): string {
  if (typeof name !== 'string' || name === '' || name.split('.').some((part) => part === '')) {
    throw new TypeError(`Invalid PostgreSQL table name: ${JSON.stringify(name)}`)
  }
  return name.split('.').map(quoteIdentifier).join('.')
}

/** The last part of a dotted name, for naming indexes and triggers (which live in their table's schema). */
export function baseName (name: string): string {
  return name.slice(name.lastIndexOf('.') + 1)
}

/** `schema.table` + suffix → `"schema"."table_suffix"`: an object (a function) beside the table, in its schema. */
export function siblingName (table: string, suffix: string): string {
  return quoteName(`${table}_${suffix}`)
}

export interface Statement {
  /** Absent: an unnamed statement, parsed at every call (what a transaction pooler needs). */
  name: string | undefined
  text: string
}

/**
 * Names each statement after a hash of its text, so it is parsed once per connection (named prepared
 * statement) and statements of stores on different tables never collide; with `named` false, leaves them
 * unnamed, since a transaction pooler hands each transaction to any server connection, where a statement
 * prepared on another one does not exist.
 */
export function prepare<K extends string> (statements: Record<K, string>, named: boolean): Record<K, Statement> {
  const prepared = {} as Record<K, Statement>
  for (const purpose of Object.keys(statements) as K[]) {
    const text = statements[purpose]
    let hash = 5381
    for (let i = 0; i < text.length; i++) hash = ((hash * 33) ^ text.charCodeAt(i)) >>> 0
    prepared[purpose] = { name: named ? `fastify_password_auth_${purpose}_${hash.toString(36)}` : undefined, text }
  }
  return prepared
}

export { pruneNowAndThen } from '../sql/prune.js'
