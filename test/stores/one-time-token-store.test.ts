import t from 'tap'
import { MemoryOneTimeTokenStore } from '../../lib/index.js'
import type { PasswordAuthMessage } from '../../lib/messages/outbox.js'
import { EMAIL, NEW_PASSWORD, PLUGIN_TIMEOUT_MS } from '../helpers/app.js'
import { passkeyApp, PASSKEYS } from '../helpers/passkeys.js'
import { expectProblem } from '../helpers/problem.js'

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

async function nextMessage (messages: PasswordAuthMessage[], type: string): Promise<PasswordAuthMessage> {
  for (let i = 0; i < 200; i++) {
    const found = messages.find((message) => message.type === type)
    if (found !== undefined) return found
    await sleep(5)
  }
  throw new Error(`no ${type} message`)
}

t.test('LoginOptions past the store\'s bound (anyone can ask for them) push out no reset link and no mfaToken', async (t) => {
  const { post, enable, challenge, loginMfa, messages } = await passkeyApp(t, { oneTimeTokens: new MemoryOneTimeTokenStore({ maxTokens: 100 }) })
  const { recoveryCodes } = await enable()
  const mfaToken = await challenge()
  t.equal((await post('/ForgotPassword', undefined, { email: EMAIL })).statusCode, 202)
  const link = await nextMessage(messages, 'password_reset')
  for (let i = 0; i < 150; i++) t.equal((await post('/Passkeys/LoginOptions', undefined)).statusCode, 200, `LoginOptions ${i}`, { diagnostic: false })

  t.equal((await loginMfa(mfaToken, recoveryCodes[0])).statusCode, 200, 'the mfaToken still works')
  const reset = await post('/ResetPassword', undefined, { token: link.token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD, code: recoveryCodes[1] })
  t.equal(reset.statusCode, 204, 'the reset link still works')
})

t.test('a memory store whose room for accounts\' tokens is full answers 503, and drops no live token', async (t) => {
  const { enable, challenge, login, loginMfa } = await passkeyApp(t, { oneTimeTokens: new MemoryOneTimeTokenStore({ maxTokens: 1 }) })
  const { recoveryCodes } = await enable()
  const mfaToken = await challenge()
  expectProblem(t, await login(), 503, 'FST_PWAUTH_UNAVAILABLE')
  t.equal((await loginMfa(mfaToken, recoveryCodes[0])).statusCode, 200, 'the first challenge was kept')
  t.ok(await challenge(), 'a used one makes room')
})

t.test('shared sessions or attempts with one-time tokens left in memory: the plugin refuses to start, naming the option to add', async (t) => {
  const { default: Fastify } = await import('fastify')
  const { default: passwordAuth, MemoryAttemptStore, MemorySessionStore } = await import('../../lib/index.js')
  const { authOptions } = await import('../helpers/app.js')
  // A store of the host's own: the plugin cannot tell it from one shared between instances.
  const own = <T extends object>(inner: T): T => Object.fromEntries(Object.getOwnPropertyNames(Object.getPrototypeOf(inner))
    .filter((name) => name !== 'constructor').map((name) => [name, (...args: unknown[]) => (inner as Record<string, (...a: unknown[]) => unknown>)[name]!(...args)])) as T
  const register = async (options: Record<string, unknown>) => {
    const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
    t.teardown(async () => { await app.close() })
    await app.register(passwordAuth, { ...await authOptions(), deliver: () => {}, ...options })
    await app.ready()
  }
  const refusal = (shared: string, features: string) => `fastify-password-auth: ${shared} are shared (not in this process's memory), but one-time tokens ` +
    '(links, LoginMfa\'s mfaToken, passkey challenges) would stay in it: a step that reaches another instance would fail. Add the option ' +
    `oneTimeTokens: new PostgresOneTimeTokenStore({ pool }) or new RedisOneTimeTokenStore({ client }), beside your ${shared} (or turn off ${features})`

  await t.rejects(register({ sessions: own(new MemorySessionStore()), mfa: true }), { code: 'FST_PWAUTH_INVALID_OPTION', message: refusal('sessions', 'mfa') })
  await t.rejects(register({ attempts: own(new MemoryAttemptStore()), passwordReset: true, registration: true }),
    { message: refusal('attempts', 'passwordReset, registration') })
  await t.rejects(register({ sessions: own(new MemorySessionStore()), attempts: own(new MemoryAttemptStore()), passkeys: PASSKEYS, account: { emailChange: true } }),
    { message: refusal('sessions and attempts', 'passkeys, account.emailChange') })
  await t.rejects(register({ sessions: own(new MemorySessionStore()), mfa: true, oneTimeTokens: new MemoryOneTimeTokenStore() }),
    { message: refusal('sessions', 'mfa') }, 'a memory store given explicitly is still one process\'s memory')

  await register({ sessions: own(new MemorySessionStore()), attempts: own(new MemoryAttemptStore()) })
  t.pass('shared stores and no feature that issues one-time tokens: it starts')
  await register({ sessions: own(new MemorySessionStore()), mfa: true, passwordReset: true, oneTimeTokens: own(new MemoryOneTimeTokenStore()) })
  t.pass('shared one-time tokens beside shared sessions: it starts')
  await register({ sessions: new MemorySessionStore(), attempts: new MemoryAttemptStore(), mfa: true, passwordReset: true, passkeys: PASSKEYS })
  t.pass('everything in this process\'s memory: it starts')
})
