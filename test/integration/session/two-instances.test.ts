import { writeFile } from 'node:fs/promises'
import { Redis } from 'ioredis'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import t from 'tap'
import { outboxMessage } from '../../helpers/outbox.js'
import { post, startServer } from '../../helpers/server-process.js'
import { postgresSchema, postgresUnavailable, REDIS_URL, redisUnavailable } from '../../helpers/services.js'

const skip = postgresUnavailable || redisUnavailable

// The shared Redis may hold other tests' keys under the same prefix (another branch's layout, a parallel run):
// only the one-time slots, which are hashes, are read.
async function oneTimeSlots (redis: Redis): Promise<string[]> {
  const keys = await redis.keys('fastify-password-auth:one-time:*')
  const types = await Promise.all(keys.map(async (key) => await redis.type(key)))
  return keys.filter((_, index) => types[index] === 'hash')
}

t.test('two example-server processes sharing PostgreSQL, Redis and the signing key act as one', { skip }, async (t) => {
  const { url: databaseUrl } = await postgresSchema(t, 'instances')
  const run = `${process.pid}-${Date.now().toString(36)}`
  const ada = `ada-${run}@example.com`
  const bob = `bob-${run}@example.com`
  const carol = `carol-${run}@example.com`
  const dave = `dave-${run}@example.com`
  const erin = `erin-${run}@example.com`
  const gina = `gina-${run}@example.com`
  const hana = `hana-${run}@example.com`
  const hanaNew = `hana-new-${run}@example.net`
  const file = join(tmpdir(), `two-instances-${run}.json`)
  const outbox = join(tmpdir(), `two-instances-${run}.outbox.jsonl`)
  await writeFile(file, JSON.stringify([
    { email: ada, password: 'correct horse battery staple' },
    { email: bob, password: 'bob has a long passphrase too' },
    { email: dave, password: 'dave keeps his own device' },
    { email: erin, password: 'erin forgets her passphrase' },
    { email: gina, password: 'gina guards her account twice' },
    { email: hana, password: 'hana moves house and back' }
  ]))
  // The per-IP limit off: every request here comes from one address.
  const env = { DATABASE_URL: databaseUrl, REDIS_URL, JWT_SECRET: `two-instances-secret-${'x'.repeat(32)}`, AUTH_ACCOUNTS_FILE: file, AUTH_RATE_LIMIT: 'off', AUTH_MAIL_OUTBOX: outbox }
  // Started together: both create the schema and load the same accounts file.
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)])

  const login = async (server: { url: string }, email: string, password: string) => await post(`${server.url}/Auth/Login`, { email, password })
  const me = async (server: { url: string }, token: string) => await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${token}` } })
  const tokenOf = async (response: Response) => (await response.json() as { accessToken: string }).accessToken
  const refresh = async (server: { url: string }, refreshToken: string) => await post(`${server.url}/Auth/Refresh`, { refreshToken })

  await t.test('a token from A works on B; logged out on B, it fails on A at once', async (t) => {
    const token = await tokenOf(await login(a, ada, 'correct horse battery staple'))
    t.equal((await me(a, token)).status, 200)
    t.equal((await me(b, token)).status, 200)
    t.equal((await post(`${b.url}/Auth/Logout`, undefined, { authorization: `Bearer ${token}` })).status, 204)
    t.equal((await me(a, token)).status, 401)
    t.equal((await post(`${a.url}/Auth/Logout`, undefined, { authorization: `Bearer ${token}` })).status, 401, 'and cannot log out twice')
  })

  await t.test('failures on A throttle the same e-mail on B', async (t) => {
    for (let i = 0; i < 5; i++) t.equal((await login(a, bob, 'wrong password')).status, 401)
    const blocked = await login(b, bob, 'bob has a long passphrase too')
    t.equal(blocked.status, 429)
    t.equal(blocked.headers.get('retry-after'), '30')
  })

  await t.test('known devices over two instances: a stranger holding the block on A and B never blocks the owner\'s device', async (t) => {
    const device = (await (await login(a, dave, 'dave keeps his own device')).json() as { deviceToken: string }).deviceToken
    const withDevice = async (server: { url: string }, password: string) => await post(`${server.url}/Auth/Login`, { email: dave, password, deviceToken: device })
    // The stranger's guesses, half on each instance, fill the e-mail's shared counter.
    for (let i = 0; i < 5; i++) t.equal((await login(i % 2 === 0 ? a : b, dave, 'a stranger guessing')).status, 401)
    t.equal((await login(b, dave, 'dave keeps his own device')).status, 429, 'the e-mail is blocked on B for a request without the device')
    t.equal((await withDevice(b, 'dave keeps his own device')).status, 200, 'the device token from A works on B')
    t.equal((await withDevice(a, 'dave keeps his own device')).status, 200)
    // 200 parallel wrong guesses with the device token, spread over both: the shared device counter admits 5.
    const statuses = await Promise.all(Array.from({ length: 200 }, async (_, i) => (await withDevice(i % 2 === 0 ? a : b, 'wrong, in parallel')).status))
    const verified = statuses.filter((status) => status === 401).length
    t.ok(verified >= 1 && verified <= 5, `${verified} verifications of 200`)
    t.equal(statuses.filter((status) => status === 429).length, 200 - verified)
  })

  await t.test('a password changed on B is required on A, and A\'s old tokens die', async (t) => {
    const old = await tokenOf(await login(a, ada, 'correct horse battery staple'))
    const changed = await post(`${b.url}/Auth/ChangePassword`, {
      email: ada, currentPassword: 'correct horse battery staple', newPassword: 'a new passphrase set on b', confirmNewPassword: 'a new passphrase set on b'
    })
    t.equal(changed.status, 204)
    t.equal((await me(a, old)).status, 401)
    t.equal((await login(a, ada, 'correct horse battery staple')).status, 401)
    t.equal((await login(a, ada, 'a new passphrase set on b')).status, 200)
  })

  await t.test('a reset asked for on A is done on B; Redis holds nothing that works as a token; the link works once', async (t) => {
    const session = await tokenOf(await login(b, erin, 'erin forgets her passphrase'))
    t.equal((await me(a, session)).status, 200)
    t.equal((await post(`${a.url}/Auth/ForgotPassword`, { email: erin })).status, 202)
    const token = (await outboxMessage(outbox, 'password_reset', erin)).token!
    // Everything Redis holds for one-time tokens, tried as a token.
    const redis = new Redis(REDIS_URL)
    t.teardown(() => { redis.disconnect() })
    const keys = await oneTimeSlots(redis)
    t.ok(keys.length >= 1, 'the token\'s slot is in Redis')
    const stored = (await Promise.all(keys.map(async (key) => Object.values(await redis.hgetall(key))))).flat()
    t.notOk(stored.includes(token) || stored.some((value) => value.includes(token.split('.')[1]!)), 'Redis holds neither the token nor its secret')
    for (const candidate of [...stored, ...keys, ...keys.map((key) => `${/\{(.*)\}/.exec(key)![1]}.${stored[0]}`)]) {
      const tried = await post(`${b.url}/Auth/ResetPassword`, { token: candidate, newPassword: 'a stolen passphrase attempt', confirmNewPassword: 'a stolen passphrase attempt' })
      t.equal(tried.status, 400, `a stored value is no token: ${candidate.slice(0, 12)}…`)
    }
    const reset = async (server: { url: string }) => await post(`${server.url}/Auth/ResetPassword`, { token, newPassword: 'erin reset this on b', confirmNewPassword: 'erin reset this on b' })
    t.equal((await reset(b)).status, 204, 'asked for on A, used on B')
    t.equal((await reset(a)).status, 400, 'used: dead on A as well')
    t.equal((await me(a, session)).status, 401, 'every session ended')
    t.equal((await login(a, erin, 'erin reset this on b')).status, 200)
  })

  await t.test('registered on A, verified on B, logged in on either; Redis keeps the argon2id hash and keyed hashes only', async (t) => {
    const frank = `frank-${run}@example.com`
    const registered = await post(`${a.url}/Auth/Register`, { email: frank, password: 'a passphrase chosen at sign-up', confirmPassword: 'a passphrase chosen at sign-up' })
    t.equal(registered.status, 202)
    const token = (await outboxMessage(outbox, 'verify_email', frank)).token!
    t.equal((await login(b, frank, 'a passphrase chosen at sign-up')).status, 401, 'pending: no account on either')
    const redis = new Redis(REDIS_URL)
    t.teardown(() => { redis.disconnect() })
    const pending = []
    for (const key of await oneTimeSlots(redis)) {
      const fields = await redis.hgetall(key)
      if (fields.e === frank) pending.push(fields)
    }
    t.equal(pending.length, 1)
    t.match(pending[0], { p: 'verify_email', w: /^\$argon2id\$/ })
    t.notOk(Object.values(pending[0]!).some((value) => value.includes(token.split('.')[1]!)), 'the token is not there')
    t.notOk(JSON.stringify(pending).includes('a passphrase chosen at sign-up'), 'nor the password')
    t.equal((await post(`${b.url}/Auth/VerifyEmail`, { token, password: 'a passphrase chosen at sign-up' })).status, 204, 'verified on B')
    t.equal((await post(`${a.url}/Auth/VerifyEmail`, { token, password: 'a passphrase chosen at sign-up' })).status, 400, 'and dead on A')
    t.equal((await login(a, frank, 'a passphrase chosen at sign-up')).status, 200, 'logs in on A')
    t.equal((await login(b, frank, 'a passphrase chosen at sign-up')).status, 200, 'and on B')
  })

  await t.test('two factors over two instances: set up on A, on for B; a code logs in once across both; the database holds no secret', async (t) => {
    const { generateSync } = await import('otplib')
    const password = 'gina guards her account twice'
    const token = await tokenOf(await login(a, gina, password))
    const bearer = { authorization: `Bearer ${token}` }
    const { secret } = await (await post(`${a.url}/Auth/Mfa/Setup`, undefined, bearer)).json() as { secret: string }
    const step = Math.floor(Date.now() / 30_000)
    const code = (at: number) => generateSync({ secret, epoch: at * 30 })
    const confirmed = await post(`${b.url}/Auth/Mfa/Confirm`, { code: code(step), password }, bearer)
    t.equal(confirmed.status, 200, 'confirmed on B')
    const { recoveryCodes } = await confirmed.json() as { recoveryCodes: string[] }
    const challenge = async (server: { url: string }) => (await (await login(server, gina, password)).json() as { mfaToken: string }).mfaToken
    t.equal((await post(`${a.url}/Auth/LoginMfa`, { mfaToken: await challenge(a), code: code(step) })).status, 401, 'the set-up code does not log in on A')
    // One code, two challenges, sent to both instances at once: one session.
    const [onA, onB] = await Promise.all([challenge(a), challenge(b)])
    const answers = await Promise.all([post(`${a.url}/Auth/LoginMfa`, { mfaToken: onA, code: code(step + 1) }), post(`${b.url}/Auth/LoginMfa`, { mfaToken: onB, code: code(step + 1) })])
    t.same(answers.map((answer) => answer.status).sort(), [200, 401], 'replay refused across instances')
    const pool = new pg.Pool({ connectionString: databaseUrl })
    t.teardown(async () => { await pool.end() })
    const { rows } = await pool.query('SELECT m.* FROM auth_mfa m JOIN auth_accounts a ON a.id::text = m.account_id WHERE a.email = $1', [gina])
    t.equal(rows.length, 1)
    t.equal(rows[0].enabled, true)
    const held = JSON.stringify(rows)
    t.notOk(held.includes(secret) || held.toLowerCase().includes(secret.toLowerCase()), 'PostgreSQL holds no TOTP secret')
    t.notOk(recoveryCodes.some((recoveryCode) => held.includes(recoveryCode) || held.includes(recoveryCode.replaceAll('-', ''))), 'nor a recovery code')
    const redis = new Redis(REDIS_URL)
    t.teardown(() => { redis.disconnect() })
    const mfaToken = await challenge(b)
    const challenges = []
    for (const key of await oneTimeSlots(redis)) {
      const fields = await redis.hgetall(key)
      if (fields.e === gina && fields.p === 'mfa_login') challenges.push(fields)
    }
    t.ok(challenges.length >= 1, 'the challenges are in Redis')
    t.notOk(JSON.stringify(challenges).includes(mfaToken.split('.')[1]!), 'as keyed hashes only')
    t.equal((await post(`${a.url}/Auth/LoginMfa`, { mfaToken, code: recoveryCodes[0] })).status, 200, 'a challenge from B answered on A')
  })

  await t.test('an account deactivated in the database loses its tokens on both, for good', async (t) => {
    const token = await tokenOf(await login(a, ada, 'a new passphrase set on b'))
    const pool = new pg.Pool({ connectionString: databaseUrl })
    t.teardown(async () => { await pool.end() })
    await pool.query('UPDATE auth_accounts SET active = false WHERE email = $1', [ada])
    t.equal((await me(a, token)).status, 401)
    t.equal((await me(b, token)).status, 401)
    await pool.query('UPDATE auth_accounts SET active = true WHERE email = $1', [ada])
    t.equal((await me(b, token)).status, 401, 'reactivated: the trigger had advanced the credential version')
    t.equal((await login(b, ada, 'a new passphrase set on b')).status, 200)
  })

  await t.test('sessions are shared: one refresh token sent to both at once gives two 200s with the same next token', async (t) => {
    const pool = new pg.Pool({ connectionString: databaseUrl })
    t.teardown(async () => { await pool.end() })
    const { rows: [{ password_hash: hash }] } = await pool.query('SELECT password_hash FROM auth_accounts WHERE email = $1', [bob])
    await pool.query('INSERT INTO auth_accounts (email, password_hash) VALUES ($1, $2)', [carol, hash])
    const session = await (await login(a, carol, 'bob has a long passphrase too')).json() as { accessToken: string, refreshToken: string }
    const [onA, onB] = await Promise.all([refresh(a, session.refreshToken), refresh(b, session.refreshToken)])
    t.same([onA.status, onB.status], [200, 200])
    const [bodyA, bodyB] = await Promise.all([onA.json(), onB.json()]) as Array<{ accessToken: string, refreshToken: string }>
    t.equal(bodyA!.refreshToken, bodyB!.refreshToken, 'the same next refresh token, never two live ones')
    t.equal((await me(b, bodyA!.accessToken)).status, 200)
    t.equal((await post(`${a.url}/Auth/Logout`, undefined, { authorization: `Bearer ${bodyB!.accessToken}` })).status, 204)
    t.equal((await refresh(b, bodyA!.refreshToken)).status, 401, 'logged out on A: the session\'s refresh token fails on B')
    t.equal((await me(b, bodyA!.accessToken)).status, 401, 'and every access token of the session')
  })

  await t.test('an instance with the next signing key keeps the sessions (JWT_PREVIOUS_SECRETS)', async (t) => {
    const token = await tokenOf(await login(a, carol, 'bob has a long passphrase too'))
    const rotated = await startServer(t, { ...env, JWT_SECRET: `the-next-secret-${'y'.repeat(32)}`, JWT_PREVIOUS_SECRETS: env.JWT_SECRET })
    t.equal((await me(rotated, token)).status, 200, 'a token of the previous key')
    const fresh = await tokenOf(await login(rotated, carol, 'bob has a long passphrase too'))
    t.equal((await me(a, fresh)).status, 401, 'the old instance does not know the new key')
  })

  await t.test('an address change asked for on A is verified on B and reverted on A; the owner signs in with her new password on both', async (t) => {
    const hanaToken = await tokenOf(await login(a, hana, 'hana moves house and back'))
    const other = await tokenOf(await login(b, hana, 'hana moves house and back'))
    t.equal((await post(`${a.url}/Auth/ChangeEmail`, { newEmail: hanaNew, password: 'hana moves house and back' }, { authorization: `Bearer ${hanaToken}` })).status, 202)
    const link = (await outboxMessage(outbox, 'email_change', hanaNew)).token!
    t.ok((await outboxMessage(outbox, 'email_change_requested', hana)) !== undefined, 'the old address hears of it')
    t.equal((await post(`${b.url}/Auth/VerifyEmailChange`, { token: link })).status, 204)
    t.equal((await post(`${a.url}/Auth/VerifyEmailChange`, { token: link })).status, 400, 'once, across both')
    t.equal((await me(a, hanaToken)).status, 200, 'the session that asked goes on')
    t.equal((await me(a, other)).status, 401, 'the other session ended on both')
    t.equal((await login(a, hanaNew, 'hana moves house and back')).status, 200, 'the new address signs in on A')
    const revert = (await outboxMessage(outbox, 'email_changed', hana)).token!
    t.equal((await post(`${a.url}/Auth/RevertEmailChange`, { token: revert, newPassword: 'hana took it back today', confirmNewPassword: 'hana took it back today' })).status, 204)
    t.equal((await me(b, hanaToken)).status, 401, 'every session ended')
    t.equal((await login(b, hana, 'hana took it back today')).status, 200)
    t.equal((await login(a, hanaNew, 'hana moves house and back')).status, 401)
  })

  await t.test('both report healthy', async (t) => {
    for (const server of [a, b]) t.same(await (await fetch(`${server.url}/health`)).json(), { status: 'ok' })
  })
})

t.test('two demo instances on one database print the same password, and the second start keeps the first one\'s sessions', { skip }, async (t) => {
  const { url: databaseUrl } = await postgresSchema(t, 'demo')
  const env = { DATABASE_URL: databaseUrl, REDIS_URL, JWT_SECRET: `two-demos-secret-${'y'.repeat(32)}` }
  const demoPassword = (server: { output: () => string }): string => /Demo account: demo@example\.com \/ (\S+)/.exec(server.output())![1]!
  const a = await startServer(t, env)
  const login = await post(`${a.url}/Auth/Login`, { email: 'demo@example.com', password: demoPassword(a) })
  t.equal(login.status, 200)
  const { accessToken } = await login.json() as { accessToken: string }

  const b = await startServer(t, env)
  t.equal(demoPassword(b), demoPassword(a), 'one password for both')
  t.equal((await post(`${b.url}/Auth/Login`, { email: 'demo@example.com', password: demoPassword(a) })).status, 200)
  t.equal((await fetch(`${a.url}/me`, { headers: { authorization: `Bearer ${accessToken}` } })).status, 200, 'A\'s token outlives B\'s start')
})
