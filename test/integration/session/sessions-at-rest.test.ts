import t, { type Test } from 'tap'
import type { MfaStore, SessionStore } from '../../../lib/index.js'
import { createPostgresSchema, PostgresMfaStore, PostgresSessionStore } from '../../../lib/stores/postgres/index.js'
import { RedisMfaStore, RedisSessionStore } from '../../../lib/stores/redis/index.js'
import { buildTestApp, SECRET, type LoginTokens } from '../../helpers/app.js'
import { mfaApp, totpCode } from '../../helpers/mfa.js'
import { deleteKeys, postgresSchema, postgresUnavailable, redisClient, redisUnavailable } from '../../helpers/services.js'

/** Every secret a session has handed out: tokens, their signatures and MACs. */
function secretsOf (bodies: LoginTokens[]): string[] {
  return bodies.flatMap(({ accessToken, refreshToken }) => [accessToken, refreshToken, accessToken.split('.')[2]!, refreshToken.split('.')[3]!])
}

/**
 * Logs in and refreshes (plus a grace answer) through a store, then reads everything the store holds:
 * no token or MAC may be in it, and an instance without the secret cannot refresh with what it holds.
 */
async function checkAtRest (t: Test, sessions: SessionStore, dump: () => Promise<string>): Promise<void> {
  const app = await buildTestApp(t, { auth: { sessions } })
  const login = await app.tokens()
  const refreshed = (await app.refresh(login.refreshToken)).json() as LoginTokens
  const grace = (await app.refresh(login.refreshToken)).json() as LoginTokens
  t.equal(grace.refreshToken, refreshed.refreshToken)
  const stored = await dump()
  t.ok(stored.length > 100, `the store holds the session (${stored.length} characters)`)
  for (const secret of secretsOf([login, refreshed, grace])) t.notOk(stored.includes(secret), `not stored: …${secret.slice(-8)}`)

  // A copy of the database alone: the same stores, any secret but the server's.
  const thief = await buildTestApp(t, { auth: { accounts: app.accounts, sessions, jwt: { secret: `not-the-server-secret-${SECRET}` } } })
  t.equal((await thief.refresh(refreshed.refreshToken)).statusCode, 401, 'the refresh token needs the server\'s secret')
  t.equal((await app.refresh(refreshed.refreshToken)).statusCode, 200, 'and the thief\'s attempt did not use it up')
}

t.test('PostgreSQL holds no refresh token, nor anything to rebuild one without the server\'s secret', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'at_rest')
  await createPostgresSchema(pool)
  await checkAtRest(t, new PostgresSessionStore({ pool }), async () => JSON.stringify((await pool.query('SELECT * FROM auth_sessions')).rows))
})

t.test('Redis holds no refresh token, nor anything to rebuild one without the server\'s secret', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  const prefix = `test:${process.pid}:${Date.now().toString(36)}:at-rest:`
  t.teardown(async () => { await deleteKeys(client, prefix) })
  await checkAtRest(t, new RedisSessionStore({ client, prefix }), async () => {
    const keys = await client.keys(`${prefix}*`)
    const values = await Promise.all(keys.map(async (key) => {
      const type = await client.type(key)
      if (type === 'hash') return await client.hgetall(key)
      return type === 'zset' ? await client.zrange(key, '0', '-1', 'WITHSCORES') : await client.get(key)
    }))
    return JSON.stringify([keys, values])
  })
})

t.test('a logged-out token stays dead with the app\'s clock behind Redis\'s (nothing expires early)', { skip: redisUnavailable }, async (t) => {
  // The finding: app clock 5 s behind Redis, 10 s tokens, a revocation set to expire with the token on
  // the app's clock expired early on Redis's, and the token worked again. Sessions end by deletion.
  const client = redisClient(t)
  const prefix = `test:${process.pid}:${Date.now().toString(36)}:skew:`
  t.teardown(async () => { await deleteKeys(client, prefix) })
  const realNow = Date.now
  Date.now = () => realNow() - 5000
  t.teardown(() => { Date.now = realNow })
  const app = await buildTestApp(t, { auth: { sessions: new RedisSessionStore({ client, prefix }), jwt: { secret: SECRET, expiresIn: 4 } } })
  const session = await app.tokens()
  t.equal((await app.logout(session.accessToken)).statusCode, 204)
  const statuses = new Set<number>()
  for (let waited = 0; waited < 4500; waited += 250) {
    statuses.add((await app.me(session.accessToken)).statusCode)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  t.same([...statuses], [401], 'never 200 during the token\'s life')
})

/** Turns two factors on through `store` and logs in with a code; nothing the store holds may yield a code. */
async function checkMfaAtRest (t: Test, store: MfaStore, dump: () => Promise<string>): Promise<void> {
  const { enable, challenge, loginMfa } = await mfaApp(t, { mfa: { store } })
  const { secret, recoveryCodes, step } = await enable()
  t.equal((await loginMfa(await challenge(), totpCode(secret, step + 1))).statusCode, 200)
  t.equal((await loginMfa(await challenge(), recoveryCodes[0])).statusCode, 200)
  const stored = await dump()
  t.ok(stored.length > 100, `the store holds the record (${stored.length} characters)`)
  t.notOk(stored.includes(secret) || stored.toLowerCase().includes(secret.toLowerCase()), 'no TOTP secret')
  for (const code of recoveryCodes) t.notOk(stored.includes(code) || stored.includes(code.replaceAll('-', '')), `no recovery code …${code.slice(-4)}`)
  t.match(stored, /v1\.hs-/, 'the secret is sealed, naming its key')
}

t.test('PostgreSQL holds no TOTP secret and no recovery code', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'mfa_at_rest')
  await createPostgresSchema(pool)
  await checkMfaAtRest(t, new PostgresMfaStore({ pool }), async () => JSON.stringify((await pool.query('SELECT * FROM auth_mfa')).rows))
})

t.test('Redis holds no TOTP secret and no recovery code', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  const prefix = `test:${process.pid}:${Date.now().toString(36)}:mfa-at-rest:`
  t.teardown(async () => { await deleteKeys(client, prefix) })
  await checkMfaAtRest(t, new RedisMfaStore({ client, prefix }), async () => {
    const keys = await client.keys(`${prefix}*`)
    return JSON.stringify([keys, await Promise.all(keys.map(async (key) => await client.hgetall(key)))])
  })
})
