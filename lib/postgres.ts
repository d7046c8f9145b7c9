/** PostgreSQL-backed stores (`fastify-password-auth/postgres`); needs the optional peer dependency pg. */
import { accountsTableSql } from './stores/postgres-accounts.js'
import { revocationsTableSql } from './stores/postgres-revocations.js'
import type { Queryable } from './stores/postgres-sql.js'

export { accountsTableSql, PostgresAccountStore, type NewPostgresAccount, type PostgresAccountStoreOptions } from './stores/postgres-accounts.js'
export { PostgresRevocationStore, revocationsTableSql, type PostgresRevocationStoreOptions } from './stores/postgres-revocations.js'
export type { Queryable } from './stores/postgres-sql.js'

/**
 * Creates the tables and indexes if they do not exist yet. Idempotent, and safe when several instances
 * start at once: the statements run as one implicit transaction (one simple query) under an advisory
 * lock, since concurrent CREATE TABLE IF NOT EXISTS can otherwise fail on PostgreSQL's catalog.
 */
export async function createPostgresSchema (pool: Queryable, { accountsTable, revocationsTable }: { accountsTable?: string, revocationsTable?: string } = {}): Promise<void> {
  await pool.query({
    text: `SELECT pg_advisory_xact_lock(hashtext('fastify-password-auth schema'));
${accountsTableSql(accountsTable)}
${revocationsTableSql(revocationsTable)}`
  })
}
