import t from 'tap'
import {
  accountsTableSql, createPostgresSchema, mfaTableSql, PostgresAccountStore, PostgresAttemptStore, PostgresMfaStore, PostgresOneTimeTokenStore, PostgresSessionStore, sessionsTableSql
} from '../../../lib/stores/postgres/index.js'
import { accountStoreContract, attemptStoreContract, CONTRACT_SESSION_POLICY, mfaStoreContract, oneTimeTokenStoreContract, sessionStoreContract } from '../../../lib/stores/testing/index.js'
import { postgresSchema, postgresUnavailable } from '../../helpers/services.js'

const HASH = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE'

t.test('PostgreSQL stores keep the store contract', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'contract')
  const checks = [
    ...accountStoreContract({
      create: async (namespace) => {
        await createPostgresSchema(pool, { accountsTable: namespace, sessionsTable: `${namespace}_sessions` })
        const store = new PostgresAccountStore({ pool, table: namespace })
        return { store, add: async (account) => (await store.add(account))!, setActive: async (id, active) => await store.setActive(id, active) }
      }
    }),
    ...sessionStoreContract({
      create: async (namespace) => {
        await createPostgresSchema(pool, { accountsTable: `${namespace}_accounts`, sessionsTable: namespace })
        return new PostgresSessionStore({ pool, table: namespace })
      }
    }),
    ...attemptStoreContract({
      create: async (namespace) => {
        await createPostgresSchema(pool, { accountsTable: `${namespace}_accounts`, sessionsTable: `${namespace}_sessions`, attemptsTable: namespace })
        return new PostgresAttemptStore({ pool, table: namespace })
      }
    }),
    ...oneTimeTokenStoreContract({
      create: async (namespace) => {
        await createPostgresSchema(pool, { accountsTable: `${namespace}_a`, sessionsTable: `${namespace}_s`, attemptsTable: `${namespace}_t`, oneTimeTokensTable: namespace })
        return new PostgresOneTimeTokenStore({ pool, table: namespace })
      }
    }),
    ...mfaStoreContract({
      create: async (namespace) => {
        await pool.query({ text: mfaTableSql(namespace) })
        return new PostgresMfaStore({ pool, table: namespace })
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
  await createPostgresSchema(pool, { accountsTable: odd, sessionsTable: `${schema}.user sessions` })
  const accounts = new PostgresAccountStore({ pool, table: odd })
  const added = await accounts.add({ email: 'q@example.com', passwordHash: HASH })
  t.equal((await accounts.findById(added!.id))?.email, 'q@example.com')
  const sessions = new PostgresSessionStore({ pool, table: `${schema}.user sessions` })
  const { createdAt } = await sessions.create({ id: 'id', accountId: added!.id, credentialVersion: 0, keyId: 'k', ip: '', userAgent: '' }, CONTRACT_SESSION_POLICY)
  t.same(await sessions.get('id'), { accountId: added!.id, credentialVersion: 0, authenticatedAt: createdAt, mfa: false })
  t.throws(() => new PostgresAccountStore({ pool, table: 'a..b' }), /Invalid PostgreSQL table name/)
  t.throws(() => sessionsTableSql(''), /Invalid PostgreSQL table name/)
})

t.test('sessions past their limits are pruned, ended ones included', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'prune')
  await createPostgresSchema(pool)
  const store = new PostgresSessionStore({ pool, pruneIntervalMs: 100 })
  const session = (id: string) => ({ id, accountId: 'a', credentialVersion: 0, keyId: 'k', ip: '', userAgent: '' })
  const short = { idleMs: 200, maxMs: 200, graceMs: 0 }
  const long = { idleMs: 60_000, maxMs: 60_000, graceMs: 0 }
  await store.create(session('short'), short)
  await store.create(session('ended'), long)
  await store.end('ended', 'logout')
  await store.create(session('long'), long)
  await new Promise((resolve) => setTimeout(resolve, 300))
  await store.create(session('trigger'), long) // starts a background prune
  await new Promise((resolve) => setTimeout(resolve, 200))
  const { rows } = await pool.query('SELECT id FROM auth_sessions ORDER BY id')
  t.same(rows.map((row) => row.id), ['ended', 'long', 'trigger'], 'an ended session is kept until its limit, to tell a late refresh why')
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

t.test('a sessions table from before authenticated_at is upgraded by its DDL, and its sessions get a time', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'upgrade')
  await pool.query(sessionsTableSql().replace(/\n\s*authenticated_at[^\n]*/, '').replace(/\nALTER TABLE[^\n]*/, ''))
  await pool.query(`INSERT INTO auth_sessions (id, account_id, credential_version, key_id, idle_until, ends_at, ip, user_agent, created_at)
    VALUES ('old', 'a1', 0, 'k', now() + interval '1 hour', now() + interval '1 day', '', '', now() - interval '1 minute')`)
  await pool.query(sessionsTableSql())
  const state = await new PostgresSessionStore({ pool }).get('old')
  t.equal(state?.accountId, 'a1')
  t.ok(state !== null && Math.abs(state.authenticatedAt - Date.now()) < 5000, 'the column\'s default: the moment of the upgrade, a conservative stand-in')
})

t.test('attempt rows with nothing left to count are pruned; blocked and remembered ones stay', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'attempts_prune')
  await createPostgresSchema(pool)
  const store = new PostgresAttemptStore({ pool, pruneIntervalMs: 60_000 })
  const policy = { freeFailures: 2, blockMs: 60_000, maxBlockMs: 60_000, leaseMs: 100, forgetAfterMs: 150 }
  let tickets = 0
  const attempt = async (key: string, outcome: 'success' | 'failure') => {
    const ticket = `${key}-${++tickets}`
    t.ok((await store.reserve(key, ticket, policy)).granted, `${ticket} granted`)
    return await store.settle(key, ticket, outcome, policy)
  }
  await store.reserve('abandoned', 'ticket', policy) // never settled: its lease runs out
  t.equal(await attempt('forgotten', 'failure'), 0, 'one failure: no block')
  t.equal(await attempt('blocked', 'failure'), 0)
  t.equal(await attempt('blocked', 'failure'), 60_000, 'the second failure starts the block, and settle says so')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(await store.prune(), 2, 'the abandoned reservation and the forgotten failure')
  const { rows } = await pool.query('SELECT key FROM auth_attempts ORDER BY key')
  t.same(rows, [{ key: 'blocked' }])
  t.notOk((await store.reserve('blocked', 'again', policy)).granted, 'still blocked')
})

t.test('reset tokens in PostgreSQL: the table holds nothing that works as a token', { skip: postgresUnavailable }, async (t) => {
  const { buildTestApp, EMAIL } = await import('../../helpers/app.js')
  const { pool } = await postgresSchema(t, 'tokens_at_rest')
  await createPostgresSchema(pool)
  const tokens: string[] = []
  const { app } = await buildTestApp(t, {
    auth: { oneTimeTokens: new PostgresOneTimeTokenStore({ pool }), passwordReset: true, deliver: (message) => { if (message.token !== undefined) tokens.push(message.token) } }
  })
  t.equal((await app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: { email: EMAIL } })).statusCode, 202)
  for (let i = 0; i < 100 && tokens.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  const { rows } = await pool.query('SELECT * FROM auth_one_time_tokens')
  t.equal(rows.length, 1)
  const stored = Object.values(rows[0]).map(String)
  t.notOk(stored.some((value) => value.includes(tokens[0]!.split('.')[1]!)), 'neither the token nor its secret is stored')
  const reset = async (token: string) => await app.inject({
    method: 'POST', url: '/Auth/ResetPassword', payload: { token, newPassword: 'a brand new passphrase here', confirmNewPassword: 'a brand new passphrase here' }
  })
  for (const candidate of [...stored, `${rows[0].slot}.${rows[0].hash}`]) t.equal((await reset(candidate)).statusCode, 400, `${candidate.slice(0, 12)}… is no token`)
  t.equal((await reset(tokens[0]!)).statusCode, 204, 'the delivered token works')
  t.same((await pool.query('SELECT * FROM auth_one_time_tokens')).rows, [], 'and is gone')
})
