import t, { type Test } from 'tap'
import { hashPassword, MemoryAccountStore, type AccountStore, type AuthEvent, type PasswordAuthOptions } from '../../lib/index.js'
import type { PasswordAuthMessage } from '../../lib/messages/outbox.js'
import { buildTestApp, CHEAP_ARGON2, EMAIL, NEW_PASSWORD, PASSWORD, PLUGIN_TIMEOUT_MS } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))
const THIRD_PASSWORD = 'yet another long passphrase here'

/** A store in which a password change lands just before the next hash write (`raceNext`: the racing change's hash). */
class RacedAccounts extends MemoryAccountStore {
  raceNext: string | undefined
  raced: string | undefined
  override async updatePasswordHash (update: Parameters<MemoryAccountStore['updatePasswordHash']>[0]): Promise<boolean> {
    const racing = this.raceNext
    if (racing !== undefined) {
      this.raceNext = undefined
      this.raced = racing
      await super.updatePasswordHash({ id: update.id, expectedHash: update.expectedHash, newHash: racing, advanceCredentialVersion: true })
    }
    return await super.updatePasswordHash(update)
  }
}

/** An app with the reset routes, whose messages and events the test reads. */
async function resetApp (t: Test, auth: Partial<PasswordAuthOptions> = {}) {
  const messages: PasswordAuthMessage[] = []
  const events: AuthEvent[] = []
  const logs: string[] = []
  const built = await buildTestApp(t, {
    fastify: { logger: { level: 'trace', stream: { write: (line: string) => { logs.push(line) } } } },
    auth: { passwordReset: true, deliver: (message) => { messages.push(message) }, onEvent: (event) => { events.push(event) }, ...auth }
  })
  const { app } = built
  const forgot = async (email: unknown = EMAIL) => await app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: { email } })
  const reset = async (token: unknown, newPassword = NEW_PASSWORD, confirmNewPassword = newPassword) =>
    await app.inject({ method: 'POST', url: '/Auth/ResetPassword', payload: { token, newPassword, confirmNewPassword } })
  /** Asks for a reset and waits for its message; resolves the token. */
  const resetToken = async (email = EMAIL): Promise<string> => {
    const before = messages.length
    t.equal((await forgot(email)).statusCode, 202)
    for (let i = 0; i < 100 && messages.length === before; i++) await sleep(5)
    const message = messages.at(-1)
    if (message?.token === undefined || messages.length === before) throw new Error('no reset message')
    return message.token
  }
  return { ...built, messages, events, logs, forgot, reset, resetToken }
}

t.test('ForgotPassword answers the same 202 for an active account, an unknown address and an inactive account; only the first gets a message', async (t) => {
  const { forgot, messages, accounts, ada, events } = await resetApp(t)
  accounts.add({ email: 'inactive@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2), active: false })
  const answers = []
  for (const email of [EMAIL, 'nobody@example.com', 'inactive@example.com', ' ADA@example.com ']) {
    const response = await forgot(email)
    const { date, ...headers } = response.headers
    answers.push({ status: response.statusCode, body: response.body, headers })
  }
  t.equal(answers[0]!.status, 202)
  t.equal(answers[0]!.body, '')
  for (const answer of answers.slice(1)) t.same(answer, answers[0], 'byte for byte the same answer')
  await sleep(50)
  t.equal(messages.length, 2, 'the two requests for ada')
  t.match(messages[0], { type: 'password_reset', to: EMAIL, token: /^[\w-]{22}\.[\w-]{43}$/, accountId: ada.id, expiresAt: Number })
  t.ok(messages[0]!.expiresAt! > Date.now() + 1790_000 && messages[0]!.expiresAt! <= Date.now() + 1800_000, 'lives 30 min')
  t.match(events.filter((event) => event.type === 'password.reset_requested').map((event) => 'outcome' in event && event.outcome),
    ['sent', 'unknown_account', 'inactive_account', 'sent'])
})

t.test('the token write and the delivery happen after the answer: a slow store or mailer does not show', async (t) => {
  // Long enough that a loaded CI machine cannot make a prompt answer look slow.
  const SLOW_MS = 1500
  const { MemoryOneTimeTokenStore } = await import('../../lib/index.js')
  const inner = new MemoryOneTimeTokenStore()
  const slowTokens = { ...inner, find: inner.find.bind(inner), consume: inner.consume.bind(inner), put: async (...args: Parameters<typeof inner.put>) => { await sleep(SLOW_MS); await inner.put(...args) } }
  let delivered = 0
  const { app } = await resetApp(t, { oneTimeTokens: slowTokens, deliver: async () => { await sleep(SLOW_MS); delivered++ } })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const started = performance.now()
  const response = await fetch(`${url}/Auth/ForgotPassword`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL }) })
  const elapsed = performance.now() - started
  t.equal(response.status, 202)
  t.ok(elapsed < SLOW_MS / 2, `answered in ${elapsed.toFixed(0)} ms, before the ${SLOW_MS} ms write and the ${SLOW_MS} ms delivery`)
  t.equal(delivered, 0)
  for (let waited = 0; waited < 4 * SLOW_MS; waited += 50) {
    if (delivered > 0) break
    await sleep(50)
  }
  t.equal(delivered, 1, 'then it was delivered')
})

t.test('a reset sets the new password, ends every session, resets the failure count and sends password_changed', async (t) => {
  const { reset, resetToken, login, tokens, me, refresh, messages, events, ada } = await resetApp(t)
  const session = await tokens()
  for (let i = 0; i < 5; i++) await login(EMAIL, 'a wrong password guess')
  t.equal((await login()).statusCode, 429, 'blocked before the reset')
  const token = await resetToken()
  const response = await reset(token)
  t.equal(response.statusCode, 204)
  t.equal(response.body, '')
  t.equal((await me(session.accessToken)).statusCode, 401, 'the old access token died')
  t.equal((await refresh(session.refreshToken)).statusCode, 401, 'and the refresh token')
  t.equal((await login(EMAIL, PASSWORD)).statusCode, 401, 'the old password is gone, and the block with the failures')
  t.equal((await login(EMAIL, NEW_PASSWORD)).statusCode, 200)
  await sleep(20)
  const changed = messages.filter((message) => message.type !== 'new_device_login').at(-1)
  t.match(changed, { type: 'password_changed', to: EMAIL, accountId: ada.id })
  t.notOk('token' in changed!)
  t.match(events.find((event) => event.type === 'password.reset'), { accountId: ada.id, email: EMAIL })
  expectProblem(t, await reset(token, THIRD_PASSWORD), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID', 'a used token is dead')
})

t.test('a mismatch, a weak password or a bad token leave the token usable', async (t) => {
  const { reset, resetToken } = await resetApp(t)
  const token = await resetToken()
  expectProblem(t, await reset(token, NEW_PASSWORD, `${NEW_PASSWORD}!`), 400, 'FST_PWAUTH_PASSWORD_MISMATCH')
  const weak = await reset(token, 'short')
  expectProblem(t, weak, 400, 'FST_PWAUTH_WEAK_PASSWORD')
  t.same(weak.json().reasons, ['too_short'])
  t.same((await reset(token, '1qaz2wsx3edc4rfv')).json().reasons, ['common'])
  t.same((await reset(token, 'x'.repeat(129))).json().reasons, ['too_long'])
  t.equal((await reset(token, PASSWORD)).statusCode, 204, 'no same_as_current: the user forgot the current one')
})

t.test('tokens that are not live are one 400: unknown, malformed, replaced, expired, outrun by a change, a deactivation or a new address', async (t) => {
  const { reset, resetToken, accounts, ada, changePassword, events } = await resetApp(t)
  for (const token of ['', 'x', 'a'.repeat(1024), 'AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
    const response = await reset(token)
    t.equal(response.statusCode, 400, `token ${JSON.stringify(token.slice(0, 12))}`)
  }
  const first = await resetToken()
  await resetToken() // the second request replaces the first token
  expectProblem(t, await reset(first), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID', 'replaced by the second')

  // Expiry in an app of its own, so no other case here can pass because its token ran out.
  const short = await resetApp(t, { passwordReset: { ttl: 1 } })
  const expiring = await short.resetToken()
  await sleep(1100)
  expectProblem(t, await short.reset(expiring), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID', 'expired')

  const beforeChange = await resetToken()
  t.equal((await changePassword({ email: EMAIL, currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).statusCode, 204)
  expectProblem(t, await reset(beforeChange, THIRD_PASSWORD), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID', 'the password changed since')

  const beforeDeactivation = await resetToken()
  accounts.setActive(ada.id, false)
  expectProblem(t, await reset(beforeDeactivation, THIRD_PASSWORD), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID', 'deactivated')
  accounts.setActive(ada.id, true)
  t.equal(events.filter((event) => event.type === 'password.reset_failed').length, 6, 'the empty token is a validation error')
})

t.test('a token dies when its account\'s e-mail changes', async (t) => {
  const { MemoryAccountStore } = await import('../../lib/index.js')
  const inner = new MemoryAccountStore()
  const ada = inner.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  let renamed = false
  // The address moved: the old one finds nothing, the new one finds the account.
  const accounts: AccountStore = {
    findByEmail: async (email) => {
      if (renamed && email === EMAIL) return null
      const account = await inner.findByEmail(renamed && email === 'ada@new.example' ? EMAIL : email)
      return account === null ? null : { ...account, email: renamed ? 'ada@new.example' : account.email }
    },
    findById: async (id) => await inner.findById(id),
    updatePasswordHash: async (update) => await inner.updatePasswordHash(update)
  }
  const { reset, resetToken } = await resetApp(t, { accounts })
  const token = await resetToken()
  renamed = true
  expectProblem(t, await reset(token), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID')
  const fresh = await resetToken('ada@new.example')
  t.equal((await reset(fresh)).statusCode, 204, 'a token for the new address works')
  t.ok(ada.id)
})

t.test('a password change landing between the reset\'s lookup and its write wins: the reset is the one 400, and ends nothing', async (t) => {
  const accounts = new RacedAccounts()
  const ada = accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const { reset, resetToken, events, messages, tokens, me } = await resetApp(t, { accounts })
  const session = await tokens()
  const token = await resetToken()
  accounts.raceNext = await hashPassword(THIRD_PASSWORD, CHEAP_ARGON2)
  expectProblem(t, await reset(token), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID')
  t.match(events.filter((event) => event.type === 'password.reset_failed'), [{ reason: 'conflict', accountId: ada.id }])
  t.notOk(events.some((event) => event.type === 'password.reset'), 'no reset reported')
  t.equal((await accounts.findByEmail(EMAIL))!.passwordHash, accounts.raced, 'the racing change stands')
  expectProblem(t, await reset(token), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID', 'the link was used up')
  await sleep(20)
  t.notOk(messages.some((message) => message.type === 'password_changed'), 'the owner hears of no reset')
  t.equal((await me(session.accessToken)).statusCode, 401, 'the racing change advanced the credential version itself')
})

t.test('of 20 concurrent resets with one token exactly one succeeds', async (t) => {
  const { reset, resetToken, login } = await resetApp(t)
  const token = await resetToken()
  const statuses = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await reset(token, `${NEW_PASSWORD} number ${i}`)).statusCode))
  t.equal(statuses.filter((status) => status === 204).length, 1)
  t.equal(statuses.filter((status) => status === 400).length, 19)
  const winner = statuses.indexOf(204)
  t.equal((await login(EMAIL, `${NEW_PASSWORD} number ${winner}`)).statusCode, 200, 'the winner\'s password is the password')
})

t.test('at most mailLimit messages per address an hour, silently; other addresses unaffected', async (t) => {
  const { forgot, messages, accounts, events } = await resetApp(t, { mailLimit: 3 })
  accounts.add({ email: 'bob@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  for (let i = 0; i < 5; i++) t.equal((await forgot()).statusCode, 202)
  t.equal((await forgot('bob@example.com')).statusCode, 202)
  await sleep(50)
  t.same(messages.map((message) => message.to), [EMAIL, EMAIL, EMAIL, 'bob@example.com'])
  t.equal(events.filter((event) => event.type === 'password.reset_requested' && event.outcome === 'limited').length, 2)
})

t.test('ChangePassword sends password_changed too', async (t) => {
  const { changePassword, messages } = await resetApp(t)
  t.equal((await changePassword({ email: EMAIL, currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).statusCode, 204)
  await sleep(20)
  t.match(messages, [{ type: 'password_changed', to: EMAIL }])
})

t.test('a deliver that throws or hangs changes no answer: logged and reported, never retried, and the token is nowhere else', async (t) => {
  let calls = 0
  let secret = ''
  const { forgot, events, logs, reset, app } = await resetApp(t, {
    deliver: (message) => { calls++; secret = message.token ?? secret; throw new Error(`mail server down while sending ${message.token ?? 'a notice'}`) }
  })
  t.equal((await forgot()).statusCode, 202)
  await sleep(50)
  t.equal(calls, 1, 'called once, not retried')
  t.match(events.find((event) => event.type === 'message.failed'), { messageType: 'password_reset', reason: 'error' })
  t.match(logs.join('\n'), /a password_reset message was not delivered \(error\)/)
  t.equal((await reset(secret)).statusCode, 204, 'the token in the failed message still works')
  await sleep(20)
  t.equal(calls, 2, 'password_changed was attempted once too')
  t.ok(secret.length > 0)
  for (const part of [secret, secret.split('.')[1]!]) {
    t.notOk(logs.join('\n').includes(part), 'no token in any log line, trace level included')
    t.notOk(JSON.stringify(events).includes(part), 'nor in any event')
  }
  t.notOk(JSON.stringify(app.printRoutes()).includes(secret))
})

t.test('input rules and store outages', async (t) => {
  const { forgot, reset, app } = await resetApp(t)
  expectProblem(t, await forgot('not an address'), 400, 'FST_PWAUTH_VALIDATION')
  expectProblem(t, await forgot(42), 400, 'FST_PWAUTH_VALIDATION')
  expectProblem(t, await reset(42), 400, 'FST_PWAUTH_VALIDATION')
  const form = await app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: 'email=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  expectProblem(t, form, 415, 'FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE')
  t.equal((await app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: { email: EMAIL } })).headers['cache-control'], 'no-store')

  const broken: AccountStore = {
    findByEmail: async () => { throw new Error('down') },
    findById: async () => { throw new Error('down') },
    updatePasswordHash: async () => { throw new Error('down') }
  }
  const down = await resetApp(t, { accounts: broken })
  for (const email of [EMAIL, 'nobody@example.com']) expectProblem(t, await down.forgot(email), 503, 'FST_PWAUTH_UNAVAILABLE', `${email}: 503 alike`)
})

t.test('options: passwordReset needs deliver; passwordReset.ttl and mailLimit are checked; the routes are off by default', async (t) => {
  await t.rejects(buildTestApp(t, { auth: { passwordReset: true } }), /passwordReset needs deliver/)
  await t.rejects(buildTestApp(t, { auth: { passwordReset: { ttl: 0 }, deliver: () => {} } }), /passwordReset\.ttl must be/)
  await t.rejects(buildTestApp(t, { auth: { deliver: 'mail' as unknown as () => void } }), /deliver must be a function/)
  await t.rejects(buildTestApp(t, { auth: { mailLimit: 0 } }), /mailLimit must be/)
  const { app } = await buildTestApp(t)
  t.equal((await app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: { email: EMAIL } })).statusCode, 404)
})

t.test('the README\'s reset block works as written: the link is built from APP_URL, the token in its fragment', async (t) => {
  const { readmeBlock } = await import('../helpers/docs.js')
  const { default: Fastify } = await import('fastify')
  const { default: passwordAuth, MemoryAccountStore, MemoryOneTimeTokenStore } = await import('../../lib/index.js')
  const block = readmeBlock('reset-options').replace('process.env.JWT_SECRET!', 'process.env.JWT_SECRET')
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  const accounts = new MemoryAccountStore()
  accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const sent: Array<{ to: string, subject: string, body: string }> = []
  const mail = async (to: string, subject: string, body: string) => { sent.push({ to, subject, body }) }
  // The block as written; only the Redis store is swapped for the memory one.
  // eslint-disable-next-line no-new-func
  const run = new Function('app', 'passwordAuth', 'accounts', 'RedisOneTimeTokenStore', 'redis', 'mail', 'APP_URL', 'process',
    `return (async () => { ${block} })()`)
  await run(app, passwordAuth, accounts, function () { return new MemoryOneTimeTokenStore() }, {}, mail, 'https://app.example.com',
    { env: { JWT_SECRET: 'a-test-secret-of-at-least-32-bytes-long' } })
  t.equal((await app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: { email: EMAIL } })).statusCode, 202)
  await sleep(50)
  t.match(sent, [{ to: EMAIL, subject: 'Reset your password', body: /^https:\/\/app\.example\.com\/reset#token=[\w-]{22}\.[\w-]{43}$/ }])
  const token = sent[0]!.body.split('#token=')[1]!
  const reset = await app.inject({ method: 'POST', url: '/Auth/ResetPassword', payload: { token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD } })
  t.equal(reset.statusCode, 204)
  await sleep(50)
  t.match(sent[1], { to: EMAIL, subject: 'Your password was changed' })
})
