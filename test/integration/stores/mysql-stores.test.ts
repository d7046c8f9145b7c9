import mysql from 'mysql2/promise'
import t from 'tap'
import {
  accountsTableMysql, activityTableMysql, attemptsTableMysql, createMysqlSchema, mfaTableMysql, MysqlAccountStore, MysqlActivityStore, MysqlAttemptStore,
  MysqlMfaStore, MysqlOneTimeTokenStore, MysqlPasskeyStore, MysqlSessionStore, MysqlTrustedDeviceStore, mysqlSchemaSql, oneTimeTokensTableMysql,
  passkeysTableMysql, sessionsTableMysql, trustedDevicesTableMysql
} from '../../../lib/stores/mysql/index.js'
import { statementsOf } from '../../../lib/stores/mysql/sql.js'
import {
  accountStoreContract, attemptStoreContract, mfaStoreContract, oneTimeTokenStoreContract, passkeyStoreContract, sessionStoreContract, trustedDeviceStoreContract,
  type ContractCheck
} from '../../../lib/stores/testing/index.js'
import { buildTestApp } from '../../helpers/app.js'
import { mysqlDatabase, mysqlUnavailable } from '../../helpers/mysql.js'
import { TcpProxy } from '../../helpers/tcp-proxy.js'

const HASH = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE'

type Pool = Awaited<ReturnType<typeof mysqlDatabase>>['pool']

async function run (pool: Pool, script: string): Promise<void> {
  for (const statement of statementsOf(script)) await pool.query(statement)
}

/** Every store contract, each check on a table of its own (named after its namespace). */
function contracts (pool: Pool): ContractCheck[] {
  const on = async <S>(namespace: string, ddl: (table: string) => string, make: (table: string) => S): Promise<S> => {
    await run(pool, ddl(namespace))
    return make(namespace)
  }
  return [
    ...accountStoreContract({
      create: async (namespace) => {
        const store = await on(namespace, accountsTableMysql, (table) => new MysqlAccountStore({ pool, table }))
        return { store, add: async (account) => (await store.add(account))!, setActive: async (id, active) => await store.setActive(id, active) }
      }
    }),
    ...sessionStoreContract({ create: async (namespace) => await on(namespace, sessionsTableMysql, (table) => new MysqlSessionStore({ pool, table })) }),
    ...attemptStoreContract({ create: async (namespace) => await on(namespace, attemptsTableMysql, (table) => new MysqlAttemptStore({ pool, table })) }),
    ...oneTimeTokenStoreContract({ create: async (namespace) => await on(namespace, oneTimeTokensTableMysql, (table) => new MysqlOneTimeTokenStore({ pool, table })) }),
    ...mfaStoreContract({ create: async (namespace) => await on(namespace, mfaTableMysql, (table) => new MysqlMfaStore({ pool, table })) }),
    ...passkeyStoreContract({ create: async (namespace) => await on(namespace, passkeysTableMysql, (table) => new MysqlPasskeyStore({ pool, table })) }),
    ...trustedDeviceStoreContract({ create: async (namespace) => await on(namespace, trustedDevicesTableMysql, (table) => new MysqlTrustedDeviceStore({ pool, table })) })
  ]
}

t.test('MySQL stores keep every store contract (MariaDB, InnoDB at REPEATABLE READ)', { skip: mysqlUnavailable }, async (t) => {
  const { pool } = await mysqlDatabase(t, 'contract')
  const [[isolation]] = await pool.query('SELECT @@tx_isolation AS level') as any
  t.equal(isolation.level, 'REPEATABLE-READ', 'the server\'s default isolation, unchanged')
  for (const check of contracts(pool)) await t.test(check.name, check.run)
})

t.test('createMysqlSchema: idempotent, one statement at a time; stores name what is wrong with their options', { skip: mysqlUnavailable }, async (t) => {
  const { pool } = await mysqlDatabase(t, 'schema', { connectionLimit: 4 })
  await Promise.all([createMysqlSchema(pool), createMysqlSchema(pool)])
  await createMysqlSchema(pool)
  const [tables] = await pool.query('SHOW TABLES') as any
  t.equal(tables.length, 11, 'eight stores, the passkeys\' handles and generations, the trusted devices\' generations')
  t.equal(statementsOf(mysqlSchemaSql()).length, 12, 'and the trigger')
  const [[options]] = await pool.query("SELECT ENGINE AS engine, TABLE_COLLATION AS collation FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'auth_sessions'") as any
  t.same(options, { engine: 'InnoDB', collation: 'utf8mb4_bin' })
  t.throws(() => new MysqlSessionStore(pool as never), /MysqlSessionStore: pass the pool inside the options, new MysqlSessionStore\(\{ pool \}\)/)
  t.throws(() => new MysqlMfaStore({ client: pool } as never), /MysqlMfaStore: unknown option client: did you mean pool\?/)
  t.throws(() => new MysqlMfaStore({ pool: { query: async () => [] } } as never), /"pool" must be a mysql2\/promise Pool/)
  t.throws(() => new MysqlMfaStore({ pool: { execute () {}, getConnection () {}, promise () {} } } as never), /of a callback pool, pass pool.promise\(\)/)
  t.throws(() => new MysqlSessionStore({ pool, table: 'a..b' }), /Invalid MySQL table name/)
  t.throws(() => new MysqlActivityStore({ pool, retentionMs: 10 }), /retentionMs must be a whole number of milliseconds from 1000/)
})

t.test('table names are quoted, and may name their database', { skip: mysqlUnavailable }, async (t) => {
  const { pool, database } = await mysqlDatabase(t, 'quoting', { connectionLimit: 4 })
  const odd = `${database}.Odd \`Table\`; DROP TABLE x`
  t.match(sessionsTableMysql(odd), `\`${database}\`.\`Odd \`\`Table\`\`; DROP TABLE x\``)
  await createMysqlSchema(pool, { sessionsTable: odd, accountsTable: `${database}.people` })
  const sessions = new MysqlSessionStore({ pool, table: odd })
  const { createdAt } = await sessions.create({ id: 'id', accountId: 'a', credentialVersion: 0, keyId: 'k', ip: '', userAgent: '' }, { idleMs: 60_000, maxMs: 60_000, graceMs: 0 })
  t.same(await sessions.get('id'), { accountId: 'a', credentialVersion: 0, authenticatedAt: createdAt, mfa: false })
  t.equal(await sessions.get('ID'), null, 'ids compare exactly (binary collation)')
  const people = new MysqlAccountStore({ pool, table: `${database}.people` })
  t.match(await people.add({ email: 'q@example.com', passwordHash: HASH }), { email: 'q@example.com' })
})

t.test('accounts: e-mails stored normalised and unique, seeding idempotent, deactivation by any SQL advances the credential version', { skip: mysqlUnavailable }, async (t) => {
  const { pool } = await mysqlDatabase(t, 'accounts', { connectionLimit: 4 })
  await createMysqlSchema(pool)
  const store = new MysqlAccountStore({ pool })
  const ada = await store.add({ email: '  Ada@Example.com ', passwordHash: HASH })
  t.equal(ada?.email, 'ada@example.com')
  await t.rejects(store.add({ email: 'ada@example.com', passwordHash: HASH }), /already exists/)
  t.equal(await store.add({ email: 'ada@example.com', passwordHash: HASH }, { ifAbsent: true }), null)
  await pool.execute('UPDATE auth_accounts SET active = 0 WHERE id = ?', [ada!.id])
  t.match(await store.findById(ada!.id), { active: false, credentialVersion: 1 }, 'the trigger advanced it')
  t.equal(await store.setActive(ada!.id, true), true)
  t.equal(await store.setActive(ada!.id, false), true)
  t.match(await store.findById(ada!.id), { active: false, credentialVersion: 2 }, 'setActive advances it once, not twice')
  t.equal(await store.findById('not-an-id'), null)
  t.equal(await store.findById(ada!.id.toUpperCase()), null, 'a UUID in another case is another id (binary collation)')
})

t.test('activity: newest first, limited, forgotten per account, pruned past the retention', { skip: mysqlUnavailable }, async (t) => {
  const { pool } = await mysqlDatabase(t, 'activity', { connectionLimit: 4 })
  await run(pool, activityTableMysql('events'))
  const store = new MysqlActivityStore({ pool, table: 'events', retentionMs: 60_000 })
  const now = Date.now()
  await store.add({ type: 'login.succeeded', time: now - 120_000, accountId: 'a', details: {} })
  await store.add({ type: 'login.failed', time: now - 10, accountId: 'a', ip: '192.0.2.1', details: { reason: 'password' } })
  await store.add({ type: 'login.succeeded', time: now, accountId: 'a', requestId: 'r1', details: {} })
  await store.add({ type: 'login.succeeded', time: now, accountId: 'b', details: {} })
  t.same(await store.list('a', 10), [
    { type: 'login.succeeded', time: now, accountId: 'a', requestId: 'r1', details: {} },
    { type: 'login.failed', time: now - 10, accountId: 'a', ip: '192.0.2.1', details: { reason: 'password' } }
  ], 'the record past the retention is not listed')
  t.equal((await store.list('a', 1)).length, 1)
  t.equal(await store.prune(), 1)
  await store.forget('a')
  t.same(await store.list('a', 10), [])
  t.equal((await store.list('b', 10)).length, 1)
})

t.test('sessions past their limits, expired tokens and trusts, and attempt rows with nothing to count are pruned', { skip: mysqlUnavailable }, async (t) => {
  const { pool } = await mysqlDatabase(t, 'prune', { connectionLimit: 4 })
  await createMysqlSchema(pool)
  const sessions = new MysqlSessionStore({ pool })
  const session = (id: string) => ({ id, accountId: 'a', credentialVersion: 0, keyId: 'k', ip: '', userAgent: '' })
  await sessions.create(session('short'), { idleMs: 50, maxMs: 50, graceMs: 0 })
  await sessions.create(session('long'), { idleMs: 60_000, maxMs: 60_000, graceMs: 0 })
  const tokens = new MysqlOneTimeTokenStore({ pool })
  await tokens.put('slot', 'hash', { purpose: 'p', accountId: 'a', email: 'a@example.com', credentialVersion: 0 }, 50)
  const attempts = new MysqlAttemptStore({ pool })
  await attempts.reserve('abandoned', 'ticket', { freeFailures: 2, blockMs: 1000, maxBlockMs: 1000, leaseMs: 20, forgetAfterMs: 20 })
  const trusted = new MysqlTrustedDeviceStore({ pool })
  await trusted.trust('a', { id: 'id-1', deviceHash: 'h-1', label: 'Chrome on Linux' }, 50, 0)
  await trusted.trust('a', { id: 'id-2', deviceHash: 'h-2', label: 'Safari on iOS' }, 60_000, 0)
  await new Promise((resolve) => setTimeout(resolve, 80))
  t.equal(await sessions.prune(), 1)
  t.equal(await tokens.prune(), 1)
  t.equal(await attempts.prune(), 1, 'the abandoned reservation')
  t.equal(await trusted.prune(), 1, 'the expired trust')
  t.same((await trusted.list('a')).map((trust) => trust.id), ['id-2'])
  const [ids] = await pool.query('SELECT id FROM auth_sessions') as any
  t.same(ids.map((row: { id: string }) => row.id), ['long'])
})

t.test('a MySQL that stops answering fails closed: 503 within the store deadline, and service resumes when it is back', { skip: mysqlUnavailable }, async (t) => {
  const { pool: setup, url } = await mysqlDatabase(t, 'outage', { connectionLimit: 2 })
  await createMysqlSchema(setup)
  const target = new URL(url)
  const proxy = await TcpProxy.create(t, { host: target.hostname, port: Number(target.port) })
  const pool = mysql.createPool({ uri: url.replace(`${target.hostname}:${target.port}`, `127.0.0.1:${proxy.port}`), connectionLimit: 4, connectTimeout: 1000 })
  t.teardown(async () => { await pool.end().catch(() => {}) })
  const { login, me, token } = await buildTestApp(t, {
    auth: { sessions: new MysqlSessionStore({ pool }), attempts: new MysqlAttemptStore({ pool }), storeTimeout: 1000 }
  })
  const access = await token()
  t.equal((await me(access)).statusCode, 200)
  proxy.blackhole()
  const started = Date.now()
  const [loginDown, meDown] = await Promise.all([login(), me(access)])
  t.equal(loginDown.statusCode, 503, 'login')
  t.equal(meDown.statusCode, 503, '/me')
  t.ok(Date.now() - started < 2500, `answered in ${Date.now() - started} ms`)
  t.equal(meDown.headers['content-type'], 'application/problem+json; charset=utf-8')
  await proxy.restore()
  t.equal((await me(access)).statusCode, 200, 'the same session, once MySQL is back')
})
