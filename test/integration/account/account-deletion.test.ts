import type { Redis } from 'ioredis'
import type pg from 'pg'
import t, { type Test } from 'tap'
import {
  hashPassword, MemoryAttemptStore, MemoryOneTimeTokenStore, MemoryPasskeyStore, MemoryTrustedDeviceStore, type PasswordAuthMessage
} from '../../../lib/index.js'
import {
  createPostgresSchema, PostgresAccountStore, PostgresActivityStore, PostgresAttemptStore, PostgresMfaStore, PostgresOneTimeTokenStore, PostgresPasskeyStore,
  PostgresSessionStore, PostgresTrustedDeviceStore
} from '../../../lib/stores/postgres/index.js'
import {
  RedisAttemptStore, RedisMfaStore, RedisOneTimeTokenStore, RedisPasskeyStore, RedisSessionStore, RedisTrustedDeviceStore
} from '../../../lib/stores/redis/index.js'
import { buildTestApp, CHEAP_ARGON2, EMAIL, PASSWORD, type TestApp } from '../../helpers/app.js'
import { totpCode } from '../../helpers/mfa.js'
import { PASSKEYS } from '../../helpers/passkeys.js'
import { deleteKeys, postgresSchema, postgresUnavailable, redisClient, redisUnavailable } from '../../helpers/services.js'

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

/** A fresh schema holding Ada's account. */
async function adaOnPostgres (t: Test, schema: string): Promise<{ pool: pg.Pool, accounts: PostgresAccountStore, ada: { id: string } }> {
  const { pool } = await postgresSchema(t, schema)
  await createPostgresSchema(pool)
  const accounts = new PostgresAccountStore({ pool })
  const ada = (await accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) }))!
  return { pool, accounts, ada }
}

/** The shared Redis with a prefix of the test's own, emptied when the test ends. */
function redisUnder (t: Test, name: string): { client: Redis, prefix: string } {
  const prefix = `test:${name}:${process.pid}:${Date.now().toString(36)}:`
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, prefix) })
  return { client, prefix }
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
  const { pool, accounts, ada } = await adaOnPostgres(t, 'deletion')
  const bob = (await accounts.add({ email: 'bob@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) }))!
  const mfaStore = new PostgresMfaStore({ pool })
  const messages: PasswordAuthMessage[] = []
  const app = await buildTestApp(t, {
    auth: {
      accounts,
      sessions: new PostgresSessionStore({ pool }),
      attempts: new PostgresAttemptStore({ pool }),
      oneTimeTokens: new PostgresOneTimeTokenStore({ pool }),
      mfa: { issuer: 'Test', store: mfaStore },
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

  t.equal((await app.app.inject({ method: 'POST', url: '/Auth/DeleteAccount', headers: { authorization: `Bearer ${access}` }, payload: { password: PASSWORD } })).statusCode, 204)
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
  const { pool, accounts, ada } = await adaOnPostgres(t, 'deletion_redis')
  const mfaStore = new PostgresMfaStore({ pool })
  const { client, prefix } = redisUnder(t, 'deletion')
  const messages: PasswordAuthMessage[] = []
  const app = await buildTestApp(t, {
    auth: {
      accounts,
      sessions: new RedisSessionStore({ client, prefix: `${prefix}sessions:` }),
      attempts: new RedisAttemptStore({ client, prefix: `${prefix}attempts:` }),
      oneTimeTokens: new RedisOneTimeTokenStore({ client, prefix: `${prefix}one-time:` }),
      mfa: { issuer: 'Test', store: mfaStore },
      passwordReset: true,
      sessionRoutes: true,
      deliver: (message) => { messages.push(message) },
      account: { deletion: true }
    }
  })
  const access = await liveALittle(app, messages, ada.id, mfaStore)
  const before = await keysText(client, prefix)
  for (const kind of ['sessions:', 'attempts:', 'one-time:']) t.ok(before.some((key) => key.startsWith(prefix + kind)), `${kind} keys before`)

  t.equal((await app.app.inject({ method: 'POST', url: '/Auth/DeleteAccount', headers: { authorization: `Bearer ${access}` }, payload: { password: PASSWORD } })).statusCode, 204)
  await sleep(100)
  t.same(await keysText(client, prefix), [], 'no key is left under the test\'s prefixes')
  const rows = await tablesText(pool)
  for (const table of TABLES) t.notOk(rows[table]!.includes(ada.id), `${table}: no row names the account`)
})

const SECOND = 'ada.second@example.net'
const PENDING = 'ada.pending@example.net'
const ADDRESSES = [EMAIL, SECOND, PENDING]

/**
 * What an account with two factors leaves in flight, beside its sessions: a revert link to the address it left,
 * a trusted device (rememberDevice), its device's password counter, a pending login challenge with a wrong code on
 * its counter, a passkey challenge and a pending change of address. Resolves a session fit for DeleteAccount.
 */
async function leaveEverything (t: Test, { app, login, token }: TestApp, messages: PasswordAuthMessage[]): Promise<string> {
  const post = async (url: string, bearer: string | undefined, payload?: Record<string, unknown>): Promise<number> => (await app.inject({
    method: 'POST', url: `/Auth${url}`, headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }, ...payload === undefined ? {} : { payload }
  })).statusCode
  const message = async (type: string, to: string): Promise<PasswordAuthMessage & { token?: string }> => {
    for (let waited = 0; waited < 5000; waited += 10) {
      const found = messages.find((m) => m.type === type && m.to === to)
      if (found !== undefined) return found
      await sleep(10)
    }
    throw new Error(`no ${type} message to ${to}`)
  }
  const first = await token()
  const setup = await app.inject({ method: 'POST', url: '/Auth/Mfa/Setup', headers: { authorization: `Bearer ${first}` } })
  const confirm = await app.inject({ method: 'POST', url: '/Auth/Mfa/Confirm', headers: { authorization: `Bearer ${first}` }, payload: { code: totpCode(setup.json().secret), password: PASSWORD } })
  t.equal(confirm.statusCode, 200, 'two factors on')
  const recoveryCodes: string[] = confirm.json().recoveryCodes
  t.equal(await post('/ChangeEmail', first, { newEmail: SECOND, password: PASSWORD }), 202)
  t.equal(await post('/VerifyEmailChange', undefined, { token: (await message('email_change', SECOND)).token }), 204, 'moved: the old address got a revert link')
  await message('email_changed', EMAIL)
  const trusted = await app.inject({ method: 'POST', url: '/Auth/LoginMfa', payload: { mfaToken: (await login(SECOND, PASSWORD)).json().mfaToken, code: recoveryCodes[0], rememberDevice: true } })
  t.equal(trusted.statusCode, 200, 'a trusted device')
  const { accessToken, deviceToken } = trusted.json()
  for (let i = 0; i < 2; i++) t.equal(await post('/Login', undefined, { email: SECOND, password: 'a wrong password', deviceToken }), 401, 'on the device\'s counter')
  const pending = (await login(SECOND, PASSWORD)).json().mfaToken
  t.type(pending, 'string', 'a pending login challenge')
  t.equal(await post('/LoginMfa', undefined, { mfaToken: pending, code: 'not-a-code-of-hers' }), 401, 'a wrong code on its counter')
  t.equal(await post('/Passkeys/RegisterOptions', accessToken), 200, 'a passkey challenge')
  t.equal(await post('/ChangeEmail', accessToken, { newEmail: PENDING, password: PASSWORD }), 202)
  await message('email_change', PENDING)
  return accessToken
}

/** Every table of the pool's schema, with its rows as text. */
async function schemaText (pool: pg.Pool): Promise<Record<string, string>> {
  const { rows } = await pool.query("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
  const text: Record<string, string> = {}
  for (const { name } of rows as Array<{ name: string }>) text[name] = JSON.stringify((await pool.query(`SELECT * FROM "${name}"`)).rows)
  return text
}

/** Budgets of messages to an address (mail.<type>.<HMAC>) count a mailbox, not an account: those of addresses the account left stay their hour. */
const isMailboxBudget = (key: string): boolean => /^mail\.|\{mail\./.test(key)

t.test('DeleteAccount with the memory stores leaves nothing in flight', async (t) => {
  const oneTimeTokens = new MemoryOneTimeTokenStore()
  const trustedDevices = new MemoryTrustedDeviceStore()
  const passkeyStore = new MemoryPasskeyStore()
  const attempts = new MemoryAttemptStore()
  const messages: PasswordAuthMessage[] = []
  const app = await buildTestApp(t, {
    auth: {
      attempts,
      oneTimeTokens,
      mfa: { issuer: 'Test', trustDays: 30, trustedDevices },
      passkeys: { ...PASSKEYS, store: passkeyStore },
      passwordReset: true,
      sessionRoutes: true,
      deliver: (message) => { messages.push(message) },
      account: { deletion: true, emailChange: true }
    }
  })
  const access = await leaveEverything(t, app, messages)
  const { ada } = app
  t.ok(oneTimeTokens.size >= 4, 'tokens before: a revert and a change link, a login and a passkey challenge')
  t.equal((await trustedDevices.list(ada.id)).length, 1, 'a trusted device before')
  const handle = await passkeyStore.userHandle(ada.id, 'a handle made now')
  t.not(handle, 'a handle made now', 'a user handle before')
  const attemptKeys = attempts.size

  t.equal((await app.app.inject({ method: 'POST', url: '/Auth/DeleteAccount', headers: { authorization: `Bearer ${access}` }, payload: { password: PASSWORD } })).statusCode, 204)
  t.equal(oneTimeTokens.size, 0, 'no one-time token is left')
  t.equal(await trustedDevices.generation(ada.id), 0, 'nothing of the trusted devices, their generation neither')
  t.equal(await passkeyStore.userHandle(ada.id, 'a new handle'), 'a new handle', 'the user handle went')
  t.ok(attempts.size <= attemptKeys - 4, `the device, code and address counters went (${attemptKeys} keys before, ${attempts.size} after)`)
  t.same(await app.sessions.list(ada.id), [])
})

t.test('DeleteAccount on PostgreSQL leaves nothing in flight: challenges, revert and change links, device counters, trusted devices', { skip: postgresUnavailable }, async (t) => {
  const { pool, accounts, ada } = await adaOnPostgres(t, 'deletion_leftovers')
  const messages: PasswordAuthMessage[] = []
  const app = await buildTestApp(t, {
    auth: {
      accounts,
      sessions: new PostgresSessionStore({ pool }),
      attempts: new PostgresAttemptStore({ pool }),
      oneTimeTokens: new PostgresOneTimeTokenStore({ pool }),
      mfa: { issuer: 'Test', store: new PostgresMfaStore({ pool }), trustDays: 30, trustedDevices: new PostgresTrustedDeviceStore({ pool }) },
      passkeys: { ...PASSKEYS, store: new PostgresPasskeyStore({ pool }) },
      admin: { activity: new PostgresActivityStore({ pool }) },
      passwordReset: true,
      sessionRoutes: true,
      deliver: (message) => { messages.push(message) },
      account: { deletion: true, emailChange: true }
    }
  })
  const access = await leaveEverything(t, app, messages)
  const purposes = (await pool.query('SELECT purpose FROM auth_one_time_tokens WHERE account_id = $1 ORDER BY purpose', [ada.id])).rows.map((row: { purpose: string }) => row.purpose)
  for (const purpose of ['email_change', 'email_revert', 'mfa_login']) t.ok(purposes.includes(purpose), `a ${purpose} token before`)
  t.ok(purposes.length >= 4, `and a passkey challenge: ${purposes.join(', ')}`)
  t.ok((await pool.query('SELECT 1 FROM auth_trusted_devices WHERE account_id = $1', [ada.id])).rowCount, 'a trusted device before')
  t.ok((await pool.query('SELECT 1 FROM auth_trusted_devices_generations WHERE account_id = $1', [ada.id])).rowCount, 'and its generation')
  t.ok((await pool.query("SELECT 1 FROM auth_attempts WHERE key LIKE 'acct.%/device.%'")).rowCount, 'a device counter before')
  t.ok((await pool.query("SELECT 1 FROM auth_attempts WHERE key LIKE 'acct.%/code.%'")).rowCount, 'a challenge\'s code counter before')

  t.equal((await app.app.inject({ method: 'POST', url: '/Auth/DeleteAccount', headers: { authorization: `Bearer ${access}` }, payload: { password: PASSWORD } })).statusCode, 204)
  await sleep(100)
  for (const [table, text] of Object.entries(await schemaText(pool))) {
    t.notOk(text.includes(ada.id), `${table}: no row names the account`)
    for (const address of ADDRESSES) t.notOk(text.toLowerCase().includes(address), `${table}: no row holds ${address}`)
  }
  // An address's counter after a success holds nothing (no failure, no lease) until the next prune: one of the address the account left may wait for it.
  const counting = (await pool.query('SELECT key FROM auth_attempts WHERE failures > 0 OR strpos(key, \'/\') > 0 OR leases <> \'{}\'')).rows.map((row: { key: string }) => row.key)
  t.same(counting.filter((key: string) => !isMailboxBudget(key)), [], 'no attempt counter is left, of the address, its devices or its challenges')
})

t.test('DeleteAccount with every store in Redis leaves no key of the account in flight', { skip: postgresUnavailable || redisUnavailable }, async (t) => {
  const { pool, accounts, ada } = await adaOnPostgres(t, 'deletion_leftovers_redis')
  const { client, prefix } = redisUnder(t, 'deletion-leftovers')
  const messages: PasswordAuthMessage[] = []
  const app = await buildTestApp(t, {
    auth: {
      accounts,
      sessions: new RedisSessionStore({ client, prefix: `${prefix}sessions:` }),
      attempts: new RedisAttemptStore({ client, prefix: `${prefix}attempts:` }),
      oneTimeTokens: new RedisOneTimeTokenStore({ client, prefix: `${prefix}one-time:` }),
      mfa: {
        issuer: 'Test',
        store: new RedisMfaStore({ client, prefix: `${prefix}mfa:` }),
        trustDays: 30,
        trustedDevices: new RedisTrustedDeviceStore({ client, prefix: `${prefix}trusted:` })
      },
      passkeys: { ...PASSKEYS, store: new RedisPasskeyStore({ client, prefix: `${prefix}passkeys:` }) },
      passwordReset: true,
      sessionRoutes: true,
      deliver: (message) => { messages.push(message) },
      account: { deletion: true, emailChange: true }
    }
  })
  const access = await leaveEverything(t, app, messages)
  const before = await keysText(client, prefix)
  for (const kind of ['sessions:', 'attempts:{acct.', 'one-time:account:', 'trusted:', 'mfa:']) t.ok(before.some((key) => key.startsWith(prefix + kind)), `${kind} keys before`)
  t.ok(before.filter((key) => key.startsWith(`${prefix}one-time:{`)).length >= 4, 'tokens: a revert and a change link, a login and a passkey challenge')

  t.equal((await app.app.inject({ method: 'POST', url: '/Auth/DeleteAccount', headers: { authorization: `Bearer ${access}` }, payload: { password: PASSWORD } })).statusCode, 204)
  await sleep(100)
  t.same((await keysText(client, prefix)).filter((key) => !isMailboxBudget(key.slice(prefix.length))), [], 'no key is left under the test\'s prefixes')
  for (const [table, text] of Object.entries(await schemaText(pool))) t.notOk(text.includes(ada.id), `${table}: no row names the account`)
})

t.test('DeleteAccount on PostgreSQL: an event of the deletion\'s own steps never lands after the account\'s activity is forgotten', { skip: postgresUnavailable }, async (t) => {
  const { pool, accounts, ada } = await adaOnPostgres(t, 'deletion_activity')
  // The activity's inserts take a while (a busy pool): the sessions the deletion ends report it after its other steps ran.
  const slowInserts = {
    query: async (config: { text: string, name?: string, values?: unknown[] }) => {
      if (config.text.startsWith('INSERT')) await sleep(150)
      return await pool.query(config)
    }
  }
  const app = await buildTestApp(t, {
    auth: { accounts, sessions: new PostgresSessionStore({ pool }), admin: { activity: new PostgresActivityStore({ pool: slowInserts }) }, account: { deletion: true } }
  })
  // A few rounds, each deleting a fresh account of the address with three live sessions.
  let id = ada.id
  for (let round = 0; round < 3; round++) {
    const sessions = await Promise.all(Array.from({ length: 3 }, async () => await app.token()))
    const deleted = await app.app.inject({ method: 'POST', url: '/Auth/DeleteAccount', headers: { authorization: `Bearer ${sessions[0]}` }, payload: { password: PASSWORD } })
    t.equal(deleted.statusCode, 204)
    await sleep(600)
    t.same((await pool.query('SELECT type FROM auth_activity WHERE account_id = $1', [id])).rows, [], `round ${round}: no activity row of the account is left`)
    id = (await accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) }))!.id
  }
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
