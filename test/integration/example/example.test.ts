import { compileErrors, validate } from '@readme/openapi-parser'
import { writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { hashPassword } from '../../../lib/index.js'
import { writeAccountsFile } from '../../helpers/accounts-file.js'
import { failingStart, post, startServer } from '../../helpers/server-process.js'

t.test('started without configuration, the demo prints its account and works end to end', async (t) => {
  const server = await startServer(t)
  const match = /Demo account: (\S+) \/ (\S+)/.exec(server.output())
  t.ok(match, 'demo credentials are printed')
  const [, email, password] = match!
  const login = await post(`${server.url}/Auth/Login`, { email, password })
  t.equal(login.status, 200)
  // The logger may flush after the start-up lines it preceded: checked once a request has been served.
  t.match(server.output(), /JWT_SECRET is not set/, 'warns about the random secret')
  t.match(server.output(), /passkeys work on pages served from AUTH_PASSKEY_ORIGINS \(http:\/\/localhost:0\) only, and the page is at http:\/\/localhost:\d+/,
    'PORT=0 without AUTH_PASSKEY_ORIGINS: the page\'s origin is not one passkeys accept, and the server says so')
  const { accessToken } = await login.json() as { accessToken: string }
  const auth = { authorization: `Bearer ${accessToken}` }

  const me = await fetch(`${server.url}/me`, { headers: auth })
  t.equal(me.status, 200)
  const account = await me.json() as Record<string, unknown>
  t.same(account, { id: account.id, email, active: true, credentialVersion: 0 }, 'the account and nothing else: no password, no hash')

  const newPassword = 'a brand new secret passphrase'
  const change = await post(`${server.url}/Auth/ChangePassword`, { email, currentPassword: password, newPassword, confirmNewPassword: newPassword })
  t.equal(change.status, 204)
  t.equal((await fetch(`${server.url}/me`, { headers: auth })).status, 401, 'the old token died with the change')

  const relogin = await post(`${server.url}/Auth/Login`, { email, password: newPassword })
  const fresh = { authorization: `Bearer ${(await relogin.json() as { accessToken: string }).accessToken}` }
  t.equal((await post(`${server.url}/Auth/Logout`, undefined, fresh)).status, 204)
  const after = await fetch(`${server.url}/me`, { headers: fresh })
  t.equal(after.status, 401, 'the token died with the logout')
  t.equal(after.headers.get('www-authenticate'), 'Bearer realm="fastify-password-auth", error="invalid_token"')
  t.equal(after.headers.get('content-type'), 'application/problem+json; charset=utf-8')
})

t.test('health, the OpenAPI document and its page', async (t) => {
  const server = await startServer(t)
  const health = await fetch(`${server.url}/health`)
  t.equal(health.status, 200)
  t.same(await health.json(), { status: 'ok' })
  const document = await (await fetch(`${server.url}/docs/json`)).json() as { openapi: string, paths: Record<string, unknown> }
  t.match(document.openapi, /^3\./)
  const validation = await validate(structuredClone(document) as never)
  t.ok(validation.valid, validation.valid ? 'a valid OpenAPI document' : compileErrors(validation))
  for (const path of ['/Auth/Login', '/Auth/ChangePassword', '/Auth/Logout', '/Auth/ForgotPassword', '/Auth/ResetPassword', '/Auth/Register', '/Auth/VerifyEmail', '/me', '/health']) t.ok(document.paths[path], path)
  const logout = (document.paths['/Auth/Logout'] as { post: { security?: unknown, description: string } }).post
  t.same(logout.security, [{ bearerAuth: [] }], 'the page\'s Authorize sends the token to Logout')
  t.match(logout.description, /`Authorization: Bearer <access token>`/, 'a code span, which the page shows as written instead of as HTML')
  const page = await fetch(`${server.url}/docs/`)
  t.equal(page.status, 200)
  t.match(await page.text(), /swagger/i)
})

t.test('AUTH_ACCOUNTS_FILE, JWT_SECRET, AUTH_TOKEN_TTL and AUTH_RATE_LIMIT configure the server', async (t) => {
  const file = await writeAccountsFile(t, [
    { email: 'Plain@Example.com', password: 'a plain text password from the file' },
    { email: 'hashed@example.com', passwordHash: await hashPassword('a pre-hashed password here'), id: 'hashed-1' },
    { email: 'off@example.com', password: 'an inactive account password', active: false }
  ])
  const server = await startServer(t, { AUTH_ACCOUNTS_FILE: file, JWT_SECRET: 'x'.repeat(40), AUTH_TOKEN_TTL: '120', AUTH_RATE_LIMIT: 'off' })
  t.notMatch(server.output(), /Demo account/)
  t.notMatch(server.output(), /JWT_SECRET is not set/)
  const plain = await post(`${server.url}/Auth/Login`, { email: 'plain@example.com', password: 'a plain text password from the file' })
  t.equal(plain.status, 200)
  t.equal((await plain.json() as { expiresIn: number }).expiresIn, 120)
  const hashed = await post(`${server.url}/Auth/Login`, { email: 'hashed@example.com', password: 'a pre-hashed password here' })
  const me = await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${(await hashed.json() as { accessToken: string }).accessToken}` } })
  t.equal((await me.json() as { id: string }).id, 'hashed-1')
  t.equal((await post(`${server.url}/Auth/Login`, { email: 'off@example.com', password: 'an inactive account password' })).status, 401)
  const statuses = new Set<number>()
  for (let i = 0; i < 110; i++) statuses.add((await post(`${server.url}/Auth/Login`, { email: `u${i}@example.com`, password: 'x' })).status)
  t.same([...statuses], [401], 'no per-IP limit with AUTH_RATE_LIMIT=off')
})

t.test('configuration mistakes stop the server with a clear message', async (t) => {
  const file = await writeAccountsFile(t, [{ email: 'a@b.c', password: 'x', passwordHash: 'y' }])
  const notJson = await writeAccountsFile(t, [])
  await writeFile(notJson, '[{"email": ')
  // One mistake of each kind (the environment, the accounts file) stops a real process, and so does every value
  // found wrong only by starting (test/plugin/example-environment.test.ts has the rest): each message names its variable.
  const taken = createServer()
  await new Promise<void>((resolve) => { taken.listen(0, '127.0.0.1', resolve) })
  t.teardown(() => { taken.close() })
  const started: Array<[Record<string, string>, RegExp]> = [
    [{ AUTH_REFRESH: 'yes' }, /AUTH_REFRESH must be "on" or "off"/],
    [{ JWT_SECRET: 'too-short' }, /JWT_SECRET must be at least 32 bytes long/],
    [{ AUTH_SESSION_IDLE_TTL: '60', AUTH_SESSION_MAX_TTL: '30' }, /AUTH_SESSION_IDLE_TTL \(60\) must not exceed AUTH_SESSION_MAX_TTL \(30\)/],
    [{ AUTH_ACCOUNTS_FILE: '/nonexistent/accounts.json' }, /AUTH_ACCOUNTS_FILE: cannot read \/nonexistent\/accounts\.json as JSON \(ENOENT/],
    [{ AUTH_ACCOUNTS_FILE: notJson }, /AUTH_ACCOUNTS_FILE: cannot read .* as JSON/],
    [{ AUTH_ACCOUNTS_FILE: file }, /AUTH_ACCOUNTS_FILE entry 0: give exactly one of "password" and "passwordHash"/],
    [{ HOST: 'no-such-host.invalid' }, /HOST no-such-host\.invalid is not an address of this machine/],
    [{ PORT: String((taken.address() as AddressInfo).port) }, /PORT \d+ is in use on HOST 127\.0\.0\.1/],
    [{ AUTH_MAIL_OUTBOX: '/nonexistent/outbox.jsonl' }, /AUTH_MAIL_OUTBOX: cannot write to \/nonexistent\/outbox\.jsonl/],
    [{ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' }, /DATABASE_URL: cannot set up the tables in PostgreSQL \(connect ECONNREFUSED/],
    [{ APP_URL: 'example.com' }, /APP_URL must be an address starting with http:\/\/ or https:\/\//]
  ]
  // Three at a time: a start on a busy 2-core machine takes seconds.
  const results: Array<Awaited<ReturnType<typeof failingStart>>> = []
  for (let i = 0; i < started.length; i += 3) results.push(...await Promise.all(started.slice(i, i + 3).map(async ([env]) => await failingStart(env))))
  for (const [i, [env, message]] of started.entries()) {
    t.equal(results[i]!.code, 1, JSON.stringify(env))
    t.match(results[i]!.output, message)
  }
  const { readConfig } = await import('../../../example/config.js')
  const { resolveOptions } = await import('../../../lib/options.js')
  const { MemoryAccountStore } = await import('../../../lib/index.js')
  t.equal(readConfig({}).mfaTrustDays, 30, 'AUTH_MFA_TRUST_DAYS: 30 days by default')
  t.equal(readConfig({ AUTH_MFA_TRUST_DAYS: '0' }).mfaTrustDays, 0, '0: off')
  t.equal(readConfig({ AUTH_MFA_TRUST_DAYS: '0.0000116' }).mfaTrustDays, 0.0000116, 'one second, for tests')
  t.equal(resolveOptions({ accounts: new MemoryAccountStore(), jwt: { secret: 'x'.repeat(32) }, mfa: { trustDays: 0.0000116 } }).mfa!.trustMs, 1000)
  t.throws(() => resolveOptions({ accounts: new MemoryAccountStore(), jwt: { keys: [{ secret: 'x'.repeat(32) }, { secret: 'short' }] } }),
    /jwt\.keys\[1\]\.secret must be at least 32 bytes long/, 'JWT_PREVIOUS_SECRETS become keys after the first')
})

t.test('AUTH_PWNED_RANGE_URL and AUTH_PWNED_TIMEOUT_MS: a breached demo password answers 403 with a reset link; a hung service delays Login by the timeout at most', async (t) => {
  const { mkdtemp } = await import('node:fs/promises')
  const { join } = await import('node:path')
  const { tmpdir } = await import('node:os')
  const { startRangeServer } = await import('../../helpers/range-server.js')
  const { outboxMessage } = await import('../../helpers/outbox.js')
  const range = await startRangeServer(t)
  const outbox = join(await mkdtemp(join(tmpdir(), 'example-breach-')), 'outbox.jsonl')
  const server = await startServer(t, { AUTH_MAIL_OUTBOX: outbox, AUTH_PWNED_RANGE_URL: range.url, AUTH_PWNED_TIMEOUT_MS: '500' })
  const [, email, password] = /Demo account: (\S+) \/ (\S+)/.exec(server.output())!
  range.mode = 'hang'
  const started = performance.now()
  t.equal((await post(`${server.url}/Auth/Login`, { email, password })).status, 200, 'the hung service does not stop Login')
  t.ok(performance.now() - started < 1500, `within the 500 ms timeout and the hash (${(performance.now() - started).toFixed(0)} ms)`)
  range.mode = 'ok'
  range.breach(password!)
  const refused = await post(`${server.url}/Auth/Login`, { email, password })
  t.equal(refused.status, 403)
  t.equal((await refused.json() as { code: string }).code, 'FST_PWAUTH_PASSWORD_RESET_REQUIRED')
  t.match(await outboxMessage(outbox, 'password_reset', email), { to: email, token: String })
  t.ok(range.requests.every(({ path, headers }) => /^[0-9A-F]{5}$/.test(path) && headers['add-padding'] === 'true'))
})
