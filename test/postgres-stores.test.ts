import t from 'tap'
import { accountsTableSql, createPostgresSchema, PostgresAccountStore, PostgresRevocationStore, revocationsTableSql } from '../lib/postgres.js'
import { accountStoreContract, revocationStoreContract } from '../lib/testing/index.js'
import { postgresSchema, postgresUnavailable } from './helpers/services.js'

const HASH = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE'

t.test('PostgreSQL stores keep the store contract', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'contract')
  const checks = [
    ...accountStoreContract({
      create: async (namespace) => {
        await createPostgresSchema(pool, { accountsTable: namespace, revocationsTable: `${namespace}_revocations` })
        const store = new PostgresAccountStore({ pool, table: namespace })
        return { store, add: async (account) => (await store.add(account))! }
      }
    }),
    ...revocationStoreContract({
      create: async (namespace) => {
        await createPostgresSchema(pool, { accountsTable: `${namespace}_accounts`, revocationsTable: namespace })
        return new PostgresRevocationStore({ pool, table: namespace })
      }
    })
  ]
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('the schema helper is idempotent and e-mails are unique whatever their case', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'unique')
  await createPostgresSchema(pool)
  await createPostgresSchema(pool)
  const store = new PostgresAccountStore({ pool })
  const ada = await store.add({ email: '  Ada@Example.com ', passwordHash: HASH })
  t.equal(ada?.email, 'ada@example.com', 'stored normalised')
  await t.rejects(pool.query('INSERT INTO auth_accounts (email, password_hash) VALUES ($1, $2)', ['ADA@EXAMPLE.COM', HASH]), { code: '23505' },
    'even a row written by other code cannot take the address in another case')
  await t.rejects(store.add({ email: 'ada@example.com', passwordHash: HASH }), /already exists/)
  t.equal(await store.add({ email: 'ada@example.com', passwordHash: HASH }, { ifAbsent: true }), null, 'ifAbsent makes seeding idempotent')
  t.equal((await store.add({ email: 'bob@example.com', passwordHash: HASH, id: '6a1f3c7e-2b1d-4c5e-9f00-1234567890ab' }))?.id, '6a1f3c7e-2b1d-4c5e-9f00-1234567890ab')
  t.equal(await store.setActive(ada!.id, false), true)
  t.equal((await store.findById(ada!.id))?.active, false)
  t.equal(await store.setActive('6a1f3c7e-2b1d-4c5e-9f00-000000000000', false), false)
})

t.test('table names are quoted, and may be schema-qualified', { skip: postgresUnavailable }, async (t) => {
  const { pool, schema } = await postgresSchema(t, 'quoting')
  const odd = `${schema}.Odd "Table"; DROP TABLE x`
  t.match(accountsTableSql(odd), `"${schema}"."Odd ""Table""; DROP TABLE x"`)
  await createPostgresSchema(pool, { accountsTable: odd, revocationsTable: `${schema}.revoked tokens` })
  const accounts = new PostgresAccountStore({ pool, table: odd })
  const added = await accounts.add({ email: 'q@example.com', passwordHash: HASH })
  t.equal((await accounts.findById(added!.id))?.email, 'q@example.com')
  const revocations = new PostgresRevocationStore({ pool, table: `${schema}.revoked tokens` })
  await revocations.revoke('id', Date.now() + 60_000)
  t.equal(await revocations.isRevoked('id'), true)
  t.throws(() => new PostgresAccountStore({ pool, table: 'a..b' }), /Invalid PostgreSQL table name/)
  t.throws(() => revocationsTableSql(''), /Invalid PostgreSQL table name/)
})

t.test('expired revocations are pruned', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'prune')
  await createPostgresSchema(pool)
  const store = new PostgresRevocationStore({ pool, pruneIntervalMs: 100 })
  await store.revoke('short', Date.now() + 200)
  await store.revoke('long', Date.now() + 60_000)
  await new Promise((resolve) => setTimeout(resolve, 300))
  await store.revoke('trigger', Date.now() + 60_000) // starts a background prune
  await new Promise((resolve) => setTimeout(resolve, 200))
  const { rows } = await pool.query('SELECT token_id FROM auth_revocations ORDER BY token_id')
  t.same(rows.map((row) => row.token_id), ['long', 'trigger'])
  t.equal(await store.prune(), 0)
})

t.test('the stores never end the pool they were given', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'pool')
  await createPostgresSchema(pool)
  const store = new PostgresAccountStore({ pool })
  await store.findByEmail('x@example.com')
  t.same((await pool.query('SELECT 1 AS one')).rows, [{ one: 1 }])
})

t.test('instances creating the schema at the same moment do not collide', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'race')
  const results = await Promise.allSettled(Array.from({ length: 8 }, async () => { await createPostgresSchema(pool) }))
  t.same(results.map((result) => result.status), Array(8).fill('fulfilled'))
  t.same((await pool.query('SELECT count(*)::int AS n FROM auth_accounts')).rows, [{ n: 0 }])
})
