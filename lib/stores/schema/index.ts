/**
 * The DDL of every store for one SQL dialect (`fastify-password-auth/schema`, and `npx fastify-password-auth schema
 * <dialect>`), for teams whose migrations own the schema (Prisma, Drizzle, Kysely, Knex): the statements the stores'
 * own `create…Schema` functions run, idempotent (`IF NOT EXISTS`), each ending with `;` at the end of a line.
 */
import { mysqlSchemaSql } from '../mysql/index.js'
import { postgresSchemaSql } from '../postgres/schema.js'
import type { SqlTables } from '../sql/tables.js'
import { sqliteSchemaSql } from '../sqlite/index.js'

export type SqlDialect = 'postgres' | 'mysql' | 'sqlite'

export const SQL_DIALECTS: readonly SqlDialect[] = ['postgres', 'mysql', 'sqlite']

/** Each store's table name (each default is `auth_<store>`), as the stores' `table` options take them. */
export type SchemaTables = SqlTables

/** Every store's tables, indexes, triggers and functions for `dialect`, as one script. */
export function schemaSql (dialect: SqlDialect, tables: SchemaTables = {}): string {
  switch (dialect) {
    case 'postgres': return postgresSchemaSql(tables)
    case 'mysql': return mysqlSchemaSql(tables)
    case 'sqlite': return sqliteSchemaSql(tables)
    default: throw new TypeError(`schemaSql: the dialect must be one of ${SQL_DIALECTS.join(', ')}, got ${JSON.stringify(dialect)}`)
  }
}
