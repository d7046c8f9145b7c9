import type pg from 'pg'
import t from 'tap'
import {
  accountsTableSql, attemptsTableSql, mfaTableSql, oneTimeTokensTableSql, passkeysTableSql, PostgresAccountStore, PostgresAttemptStore, PostgresMfaStore,
  PostgresOneTimeTokenStore, PostgresPasskeyStore, PostgresSessionStore, PostgresTrustedDeviceStore, sessionsTableSql, trustedDevicesTableSql
} from '../../../lib/stores/postgres/index.js'
import {
  accountStoreContract, attemptStoreContract, mfaStoreContract, oneTimeTokenStoreContract, passkeyStoreContract, sessionStoreContract,
  trustedDeviceStoreContract
} from '../../../lib/stores/testing/index.js'
import { pgbouncerUnavailable, startPgBouncer } from '../../helpers/pgbouncer.js'
import { postgresSchema, postgresUnavailable } from '../../helpers/services.js'
import type { Teardown } from '../../helpers/teardown.js'

// Every PostgreSQL store behind PgBouncer 1.18 in transaction mode (Debian's), the way hosted PostgreSQL is
// often reached: each statement may run on another server connection than the one before it.
const skip = postgresUnavailable || pgbouncerUnavailable

/** A schema of the test's own (made and dropped directly on PostgreSQL) and a pool through PgBouncer. */
async function pooledSchema (t: Teardown, url: string, label: string): Promise<{ pool: pg.Pool, schema: string }> {
  return await postgresSchema(t, `pooler_${label}`, { through: url })
}

t.test('PgBouncer in transaction mode', { skip }, async (t) => {
  const { url } = await startPgBouncer(t)

  await t.test('named prepared statements break behind it: what preparedStatements: false is for', async (t) => {
    const { pool, schema } = await pooledSchema(t, url, 'named')
    await pool.query(accountsTableSql(`${schema}.accounts`))
    const store = new PostgresAccountStore({ pool, table: `${schema}.accounts`, preparedStatements: true })
    const errors = new Set<string>()
    for (let round = 0; round < 20 && errors.size === 0; round++) {
      const results = await Promise.allSettled(Array.from({ length: 20 }, async () => await store.findByEmail('nobody@example.com')))
      for (const result of results) if (result.status === 'rejected') errors.add((result.reason as Error).message)
    }
    t.match([...errors].join('\n'), /prepared statement "fastify_password_auth_\w+" (does not exist|already exists)/,
      'the setup reproduces the failure, so the contract runs below can fail')
  })

  await t.test('every PostgreSQL store keeps its contract through it, concurrency cases included', async (t) => {
    const { pool, schema } = await pooledSchema(t, url, 'contract')
    const options = { pool, preparedStatements: false }
    // Each store's own DDL, in the test's schema (nothing lands in public).
    const table = async (ddl: (table: string) => string, namespace: string): Promise<string> => {
      await pool.query(ddl(`${schema}.${namespace}`))
      return `${schema}.${namespace}`
    }
    const checks = [
      ...accountStoreContract({
        create: async (namespace) => {
          const store = new PostgresAccountStore({ ...options, table: await table(accountsTableSql, namespace) })
          return { store, add: async (account) => (await store.add(account))!, setActive: async (id, active) => await store.setActive(id, active) }
        }
      }),
      ...sessionStoreContract({ create: async (namespace) => new PostgresSessionStore({ ...options, table: await table(sessionsTableSql, namespace) }) }),
      ...attemptStoreContract({ create: async (namespace) => new PostgresAttemptStore({ ...options, table: await table(attemptsTableSql, namespace) }) }),
      ...oneTimeTokenStoreContract({ create: async (namespace) => new PostgresOneTimeTokenStore({ ...options, table: await table(oneTimeTokensTableSql, namespace) }) }),
      ...mfaStoreContract({ create: async (namespace) => new PostgresMfaStore({ ...options, table: await table(mfaTableSql, namespace) }) }),
      ...passkeyStoreContract({ create: async (namespace) => new PostgresPasskeyStore({ ...options, table: await table(passkeysTableSql, namespace) }) }),
      ...trustedDeviceStoreContract({ create: async (namespace) => new PostgresTrustedDeviceStore({ ...options, table: await table(trustedDevicesTableSql, namespace) }) })
    ]
    for (const check of checks) await t.test(check.name, check.run)
  })
})
