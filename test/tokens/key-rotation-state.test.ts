import t, { type Test } from 'tap'
import { MemoryAttemptStore, MemoryMfaStore, MemoryOneTimeTokenStore, type JwtKey, type PasswordAuthOptions } from '../../lib/index.js'
import type { PasswordAuthMessage } from '../../lib/messages/outbox.js'
import { buildTestApp, EMAIL, NEW_PASSWORD, PASSWORD, type TestApp } from '../helpers/app.js'
import { currentStep, mfaApp, totpCode } from '../helpers/mfa.js'

// Contract §5: rotating the signing key changes nothing but the signing key.
const OLD: JwtKey = { secret: 'the-old-signing-secret-of-32-bytes-or-more' }
const NEW: JwtKey = { secret: 'the-new-signing-secret-of-32-bytes-or-more' }
const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))
/** Waits until `step` is within the server's tolerance (one step ahead of now). */
const reachable = async (step: number) => { await sleep(Math.max(0, (step - 1) * 30_000 - Date.now() + 50)) }

/** The stores several instances share, and an instance over them holding `keys`, whose messages land in `messages`. */
function deployment (t: Test, shared: Partial<PasswordAuthOptions> = {}) {
  const stores = { attempts: new MemoryAttemptStore(), oneTimeTokens: new MemoryOneTimeTokenStore(), mfa: { store: new MemoryMfaStore() }, ...shared }
  const messages: PasswordAuthMessage[] = []
  let first: TestApp | undefined
  const instance = async (keys: JwtKey[], auth: Partial<PasswordAuthOptions> = {}): Promise<TestApp> => {
    const app = await buildTestApp(t, {
      auth: {
        ...stores,
        ...first === undefined ? {} : { accounts: first.accounts, sessions: first.sessions },
        jwt: { keys },
        passwordReset: true,
        deliver: (message) => { messages.push(message) },
        ...auth
      }
    })
    first ??= app
    return app
  }
  const forgot = async (app: TestApp) => await app.app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: { email: EMAIL } })
  return { stores, messages, instance, forgot }
}

t.test('instances holding the keys in opposite order share one password counter: 5 free failures in all, not 5 each', async (t) => {
  const { instance } = deployment(t)
  const a = await instance([OLD, NEW])
  const b = await instance([NEW, OLD])
  for (let i = 0; i < 5; i++) t.equal((await (i % 2 === 0 ? a : b).login(EMAIL, `wrong ${i}`)).statusCode, 401)
  t.equal((await a.login(EMAIL, 'wrong again')).statusCode, 429, 'the 6th guess is refused on one instance')
  t.equal((await b.login()).statusCode, 429, 'and on the other, even with the right password')
})

t.test('a rotation lifts no block: failures counted before it still count after it', async (t) => {
  const { instance } = deployment(t)
  const before = await instance([OLD])
  for (let i = 0; i < 5; i++) t.equal((await before.login(EMAIL, `wrong ${i}`)).statusCode, 401)
  const after = await instance([NEW, OLD])
  t.equal((await after.login(EMAIL, 'wrong again')).statusCode, 429, 'blocked after the rotation too')
})

t.test('a rotation lifts no mail budget, and opposite key orders share it', async (t) => {
  const { instance, forgot, messages } = deployment(t)
  const before = await instance([OLD], { mailLimit: 2 })
  const a = await instance([OLD, NEW], { mailLimit: 2 })
  const b = await instance([NEW, OLD], { mailLimit: 2 })
  for (const app of [before, a, b, a, b]) t.equal((await forgot(app)).statusCode, 202)
  await sleep(100)
  t.equal(messages.filter((message) => message.type === 'password_reset').length, 2, 'two links an hour, whatever the instance or the key order')
})

t.test('a reset link asked before a rotation, or on an instance with the keys in another order, still works', async (t) => {
  const { instance, forgot, messages } = deployment(t)
  const before = await instance([OLD])
  t.equal((await forgot(before)).statusCode, 202)
  await sleep(50)
  const token = messages.at(-1)?.token
  t.type(token, 'string')
  const after = await instance([NEW, OLD])
  const reset = await after.app.inject({ method: 'POST', url: '/Auth/ResetPassword', payload: { token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD } })
  t.equal(reset.statusCode, 204, reset.body)
  t.equal((await after.login(EMAIL, NEW_PASSWORD)).statusCode, 200)
  const again = await after.app.inject({ method: 'POST', url: '/Auth/ResetPassword', payload: { token, newPassword: PASSWORD, confirmNewPassword: PASSWORD } })
  t.equal(again.statusCode, 400, 'and is used up')
})

t.test('a login challenge made on one instance is answered on one holding the keys in the other order; its wrong codes count once', async (t) => {
  const shared = { attempts: new MemoryAttemptStore(), oneTimeTokens: new MemoryOneTimeTokenStore(), mfa: { store: new MemoryMfaStore() } }
  const a = await mfaApp(t, { ...shared, jwt: { keys: [OLD, NEW] } })
  const b = await mfaApp(t, { ...shared, accounts: a.accounts, sessions: a.sessions, jwt: { keys: [NEW, OLD] } })
  const { secret, step } = await a.enable()
  const mfaToken = await a.challenge()
  // 5 wrong codes kill a challenge: alternating instances must not get 5 each.
  for (let i = 0; i < 4; i++) t.equal((await (i % 2 === 0 ? a : b).loginMfa(mfaToken, '000000')).statusCode, 401)
  const next = Math.max(step + 1, currentStep())
  await reachable(next)
  t.equal((await b.loginMfa(mfaToken, totpCode(secret, next))).statusCode, 200, 'the challenge made on A resolves on B')
  const killed = await a.challenge()
  for (let i = 0; i < 5; i++) await (i % 2 === 0 ? a : b).loginMfa(killed, '000000')
  t.equal((await a.loginMfa(killed, totpCode(secret, next + 1))).statusCode, 401, 'the 5th wrong code, on either instance, ended it')
})

t.test('a TOTP secret sealed under the old key is re-sealed at its next use: removing the old key then locks nobody out', async (t) => {
  const shared = { mfa: { store: new MemoryMfaStore() } }
  const before = await mfaApp(t, { ...shared, jwt: { keys: [OLD] } })
  const { secret, step } = await before.enable()
  const during = await mfaApp(t, { ...shared, accounts: before.accounts, sessions: before.sessions, jwt: { keys: [NEW, OLD] } })
  const next = step + 1
  await reachable(next)
  t.equal((await during.loginMfa(await during.challenge(), totpCode(secret, next))).statusCode, 200)
  const sealed = (await shared.mfa.store.get(before.ada.id))!.secret
  const after = await mfaApp(t, { ...shared, accounts: before.accounts, sessions: before.sessions, jwt: { keys: [NEW] } })
  await reachable(next + 1)
  t.equal((await after.loginMfa(await after.challenge(), totpCode(secret, next + 1))).statusCode, 200, `logs in with the old key gone (${sealed.split('.')[1]!})`)
})

t.test('passwordAuth.reseal() re-seals every secret an older key sealed, pending ones too; then the old key can go', async (t) => {
  const shared = { mfa: { store: new MemoryMfaStore() } }
  const before = await mfaApp(t, { ...shared, jwt: { keys: [OLD] } })
  const { secret } = await before.enable()
  await shared.mfa.store.begin('pending-account', (await shared.mfa.store.get(before.ada.id))!.secret)
  const during = await mfaApp(t, { ...shared, accounts: before.accounts, sessions: before.sessions, jwt: { keys: [NEW, OLD] } })
  t.same(await during.app.passwordAuth.reseal(), { resealed: 1, unreadable: 1 }, 'the copied secret opens for no other account: unreadable')
  t.same(await during.app.passwordAuth.reseal(), { resealed: 0, unreadable: 1 }, 'a second run has nothing left to re-seal')
  const after = await mfaApp(t, { ...shared, accounts: before.accounts, sessions: before.sessions, jwt: { keys: [NEW] } })
  t.equal((await after.loginMfa(await after.challenge(), totpCode(secret, currentStep() + 1))).statusCode, 200, 'the old key removed, she still logs in')
  const plain = await buildTestApp(t)
  t.same(await plain.app.passwordAuth.reseal(), { resealed: 0, unreadable: 0 }, 'nothing to do without two factors')
})
