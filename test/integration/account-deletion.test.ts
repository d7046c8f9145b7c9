import type { Redis } from 'ioredis'
import type pg from 'pg'
import t from 'tap'
import { hashPassword, type PasswordAuthMessage } from '../../lib/index.js'
import {
  createPostgresSchema, PostgresAccountStore, PostgresActivityStore, PostgresAttemptStore, PostgresMfaStore, PostgresOneTimeTokenStore, PostgresSessionStore
} from '../../lib/stores/postgres/index.js'
import { RedisAttemptStore, RedisOneTimeTokenStore, RedisSessionStore } from '../../lib/stores/redis/index.js'
import { buildTestApp, CHEAP_ARGON2, EMAIL, PASSWORD } from '../helpers/app.js'
import { deleteKeys, postgresSchema, postgresUnavailable, redisClient, redisUnavailable } from '../helpers/services.js'

const TABLES = ['auth_accounts', 'auth_sessions', 'auth_attempts', 'auth_one_time_tokens', 'auth_mfa', 'auth_activity']
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** Every row of the plugin's tables, as text. */
async function tablesText (pool: pg.Pool): Promise<Record<string, string>> {
  const text: Record<string, string> = {}
  for (const table of TABLES) text[table] = JSON.stringify((await pool.query(`SELECT * FROM ${table}`)).rows)
  return text
}

/** Every key under `prefix`, with its value, as text. */
async function keysText (redis: Redis, prefix: string): Promise<string[]> {
  const keys = await redis.keys(`${prefix}*`)
  return await Promise.all(keys.map(async (key) => {
    const type = await redis.type(key)
    const value = type === 'hash' ? await redis.hgetall(key) : type === 'zset' ? await redis.zrange(key, '0', '-1') : type === 'string' ? await redis.get(key) : type
    return `${key} ${JSON.stringify(value)}`
  }))
}

/** A user's life before they leave: two sessions, a reset link, a few wrong passwords, a pending second factor, a change of address. */
async function liveALittle (app: Awaited<ReturnType<typeof buildTestApp>>, messages: PasswordAuthMessage[], accountId: string, mfa: PostgresMfaStore): Promise<string> {
  await app.tokens()
  const access = await app.token()
  t.equal((await app.app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: { email: EMAIL } })).statusCode, 202)
  for (let i = 0; i < 2; i++) t.equal((await app.login(EMAIL, 'a wrong password')).statusCode, 401)
  await mfa.begin(accountId, 'sealed-secret-of-a-pending-setup')
  for (let i = 0; i < 100 && !messages.some((m) => m.type === 'password_reset'); i++) await sleep(10)
  return access
}

t.test('DeleteAccount on PostgreSQL: no row of the account is left in any table', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'deletion')
  await createPostgresSchema(pool)
  const accounts = new PostgresAccountStore({ pool })
  const ada = (await accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) }))!
  const bob = (await accounts.add({ email: 'bob@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) }))!
  const mfaStore = new PostgresMfaStore({ pool })
  const messages: PasswordAuthMessage[] = []
  const app = await buildTestApp(t, {
    auth: {
      accounts,
      sessions: new PostgresSessionStore({ pool }),
      attempts: new PostgresAttemptStore({ pool }),
      oneTimeTokens: new PostgresOneTimeTokenStore({ pool }),
      mfa: { issuer: 'Test' },
      mfaStore,
      admin: { activity: new PostgresActivityStore({ pool }) },
      passwordReset: true,
      sessionRoutes: true,
      deliver: (message) => { messages.push(message) },
      account: { deletion: true }
    }
  })
  const bobsToken = await app.token('bob@example.com')
  // Bob's new-device notice is counted after his Login's answer: his keys are read once it went out.
  for (let waited = 0; !messages.some((message) => message.type === 'new_device_login' && message.to === 'bob@example.com') && waited < 5000; waited += 10) await sleep(10)
  const keysOf = async (): Promise<string[]> => (await pool.query('SELECT key FROM auth_attempts ORDER BY key')).rows.map((row: { key: string }) => row.key)
  const bobsKeys = await keysOf()
  const access = await liveALittle(app, messages, ada.id, mfaStore)
  const before = await tablesText(pool)
  for (const table of ['auth_accounts', 'auth_sessions', 'auth_attempts', 'auth_one_time_tokens', 'auth_mfa', 'auth_activity']) {
    t.ok(before[table]!.includes(ada.id) || (table === 'auth_attempts' && before[table] !== '[]'), `${table} held something of ada before`)
  }

  t.equal((await app.app.inject({ method: 'POST', url: '/Auth/DeleteAccount', headers: { authorization: `Bearer ${access}` } })).statusCode, 204)
  await sleep(100)
  const after = await tablesText(pool)
  for (const table of TABLES) {
    t.notOk(after[table]!.includes(ada.id), `${table}: no row names the account`)
    t.notOk(after[table]!.toLowerCase().includes(EMAIL), `${table}: no row holds the address`)
  }
  t.same(await keysOf(), bobsKeys, 'no attempt counter or message budget of the address is left: only bob\'s')
  t.ok(after.auth_accounts!.includes(bob.id), 'another account is untouched')
  t.equal((await app.me(bobsToken)).statusCode, 200, 'and its session lives')
})

t.test('DeleteAccount with sessions, attempts and one-time tokens in Redis: no key of the account is left', { skip: postgresUnavailable || redisUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'deletion_redis')
  await createPostgresSchema(pool)
  const accounts = new PostgresAccountStore({ pool })
  const ada = (await accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) }))!
  const mfaStore = new PostgresMfaStore({ pool })
  const prefix = `test:deletion:${process.pid}:${Date.now().toString(36)}:`
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, prefix) })
  const messages: PasswordAuthMessage[] = []
  const app = await buildTestApp(t, {
    auth: {
      accounts,
      sessions: new RedisSessionStore({ client, prefix: `${prefix}sessions:` }),
      attempts: new RedisAttemptStore({ client, prefix: `${prefix}attempts:` }),
      oneTimeTokens: new RedisOneTimeTokenStore({ client, prefix: `${prefix}one-time:` }),
      mfa: { issuer: 'Test' },
      mfaStore,
      passwordReset: true,
      sessionRoutes: true,
      deliver: (message) => { messages.push(message) },
      account: { deletion: true }
    }
  })
  const access = await liveALittle(app, messages, ada.id, mfaStore)
  const before = await keysText(client, prefix)
  for (const kind of ['sessions:', 'attempts:', 'one-time:']) t.ok(before.some((key) => key.startsWith(prefix + kind)), `${kind} keys before`)

  t.equal((await app.app.inject({ method: 'POST', url: '/Auth/DeleteAccount', headers: { authorization: `Bearer ${access}` } })).statusCode, 204)
  await sleep(100)
  t.same(await keysText(client, prefix), [], 'no key is left under the test\'s prefixes')
  const rows = await tablesText(pool)
  for (const table of TABLES) t.notOk(rows[table]!.includes(ada.id), `${table}: no row names the account`)
})

t.test('PostgresActivityStore: newest first, per account, nothing past its retention, pruned, forgotten with the account', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'activity')
  await createPostgresSchema(pool)
  const store = new PostgresActivityStore({ pool, retentionMs: 1000 })
  t.throws(() => new PostgresActivityStore({ pool, retentionMs: 999 }), /retentionMs/)
  const now = Date.now()
  await store.add({ type: 'login.failed', time: now - 5000, accountId: 'a', details: { reason: 'wrong_password' } })
  await store.add({ type: 'login.succeeded', time: now - 10, accountId: 'a', requestId: 'req-1', ip: '203.0.113.9', details: { sessionId: 's1' } })
  await store.add({ type: 'logout', time: now, accountId: 'a', details: {} })
  await store.add({ type: 'logout', time: now, accountId: 'b', details: {} })
  t.same((await store.list('a', 10)).map((r) => r.type), ['logout', 'login.succeeded'], 'the old one is past retention')
  t.match((await store.list('a', 10))[1], { requestId: 'req-1', ip: '203.0.113.9', details: { sessionId: 's1' }, time: now - 10 })
  t.equal((await store.list('a', 1)).length, 1)
  t.equal(await store.prune(), 1, 'the old row is deleted')
  await store.forget('a')
  t.same(await store.list('a', 10), [])
  t.equal((await store.list('b', 10)).length, 1)
})
