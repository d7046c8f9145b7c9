import t, { type Test } from 'tap'
import { MemoryTrustedDeviceStore, type TrustedDeviceStore } from '../../lib/index.js'
import { trustedDeviceStoreContract } from '../../lib/stores/testing/index.js'
import { changeBody, decodeJwt, EMAIL, NEW_PASSWORD, PASSWORD, PLUGIN_TIMEOUT_MS, testClock, type TestClock } from '../helpers/app.js'
import { currentStep, mfaApp, totpCode } from '../helpers/mfa.js'
import { expectProblem } from '../helpers/problem.js'

// Contract §21: a LoginMfa with rememberDevice trusts its device for the second factor for mfa.trustDays.

const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36'
const DAY_MS = 86_400_000
const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

/** A memory store on `clock` whose methods `overrides` replace (they may call the real ones on `inner`). */
function wrapped (clock: TestClock, overrides: (inner: MemoryTrustedDeviceStore) => Partial<TrustedDeviceStore>): TrustedDeviceStore {
  const inner = new MemoryTrustedDeviceStore({ now: clock.now })
  const methods = ['generation', 'trust', 'use', 'list', 'remove', 'endAll'] as const
  const store = Object.fromEntries(methods.map((name) => [name, (inner[name] as (...args: unknown[]) => unknown).bind(inner)])) as unknown as TrustedDeviceStore
  return Object.assign(store, overrides(inner))
}

t.test('the memory trusted-device store keeps the store contract', async (t) => {
  for (const check of trustedDeviceStoreContract({ create: async () => new MemoryTrustedDeviceStore() })) await t.test(check.name, check.run)
})

/**
 * Two factors on for ada, trusted devices on (30 days unless `trustDays`); the trust store's clock moves with `trustClock`.
 * `trustedLogin()` logs in with the password and a code and rememberDevice, and resolves the device token.
 */
async function trustApp (t: Test, { trustDays = 30, store, passwordReset = false }: { trustDays?: number, store?: (clock: TestClock) => TrustedDeviceStore, passwordReset?: boolean } = {}) {
  const trustClock = testClock()
  const trustedDevices = store?.(trustClock) ?? new MemoryTrustedDeviceStore({ now: trustClock.now })
  const built = await mfaApp(t, { mfa: { issuer: 'Example App', trustDays, trustedDevices }, passwordReset })
  const enabled = await built.enable()
  const { app } = built
  let codes = [...enabled.recoveryCodes]
  const nextCode = (): string => codes.shift()!
  const login = async (deviceToken?: string, password = PASSWORD) => await app.inject({
    method: 'POST', url: '/Auth/Login', headers: { 'user-agent': CHROME_MAC }, payload: { email: EMAIL, password, ...deviceToken === undefined ? {} : { deviceToken } }
  })
  const loginMfa = async (mfaToken: string, body: Record<string, unknown> = {}) => await app.inject({
    method: 'POST', url: '/Auth/LoginMfa', headers: { 'user-agent': CHROME_MAC }, payload: { mfaToken, code: nextCode(), ...body }
  })
  /** Password, code and rememberDevice; resolves the body (deviceToken, accessToken…). */
  const trustedLogin = async (password = PASSWORD, deviceToken?: string) => {
    const challenged = await login(deviceToken, password)
    const answer = await loginMfa(challenged.json().mfaToken, { rememberDevice: true, ...deviceToken === undefined ? {} : { deviceToken } })
    if (answer.statusCode !== 200) throw new Error(`LoginMfa: ${answer.statusCode} ${answer.body}`)
    return answer.json()
  }
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
  const devices = async (token: string) => await app.inject({ url: '/Auth/Sessions/Devices', headers: bearer(token) })
  return { ...built, ...enabled, trustClock, trustedDevices, login, loginMfa, trustedLogin, nextCode, bearer, devices, setCodes: (list: string[]) => { codes = list } }
}

t.test('a trusted device logs in with the right password and no code: amr ["pwd", "mfa"], marked in the sessions list', async (t) => {
  const { trustedLogin, login, devices, bearer, app, events, trustClock } = await trustApp(t)
  const { deviceToken, accessToken: first } = await trustedLogin()
  t.type(deviceToken, 'string')
  const [trust] = (await devices(first)).json()
  t.match(trust, { id: String, label: 'Chrome on macOS', trustedUntil: /Z$/, lastUsedAt: /Z$/ })
  t.ok(Math.abs(Date.parse(trust.trustedUntil) - Date.now() - 30 * DAY_MS) < 5000, 'for mfa.trustDays')
  t.match(events.find((event) => event.type === 'mfa.device_trusted'), { trustId: trust.id })

  trustClock.advance(60_000)
  const skipped = await login(deviceToken)
  t.equal(skipped.statusCode, 200)
  const body = skipped.json()
  t.notOk('mfaRequired' in body, 'tokens, not a challenge')
  t.same(decodeJwt(body.accessToken).payload.amr, ['pwd', 'mfa'])
  t.equal((await app.inject({ url: '/secure', headers: bearer(body.accessToken) })).statusCode, 200, 'it satisfies requireMfa')
  const refreshed = await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: { refreshToken: body.refreshToken } })
  t.same(decodeJwt(refreshed.json().accessToken).payload.amr, ['pwd', 'mfa'], 'and so does every refresh of it')
  t.match(events.filter((event) => event.type === 'login.succeeded').at(-1), { mfa: true, trustedDevice: true })
  const sessions = (await app.inject({ url: '/Auth/Sessions', headers: bearer(body.accessToken) })).json()
  t.same(sessions.map((s: { trustedDevice: boolean }) => s.trustedDevice), [false, false, true], 'the set-up session, the LoginMfa one, the trusted one')
  t.same(decodeJwt(first).payload.amr, ['pwd', 'otp', 'mfa'], 'the LoginMfa session proved a code')
  const [used] = (await devices(first)).json()
  t.ok(Date.parse(used.lastUsedAt) - Date.parse(trust.lastUsedAt) >= 59_000, 'the use is recorded')

  expectProblem(t, await login(deviceToken, 'not the password at all'), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'the password is still needed')
  t.equal((await login()).json().mfaRequired, true, 'without the device token: the code')
  t.equal((await login('x'.repeat(80))).json().mfaRequired, true, 'with a forged one: the code')
})

t.test('without rememberDevice, and in a plugin without trustDays (the default), nothing is trusted', async (t) => {
  const { login, loginMfa, devices, trustedDevices, ada } = await trustApp(t)
  const challenged = await login()
  const { deviceToken, accessToken } = (await loginMfa(challenged.json().mfaToken)).json()
  t.equal((await login(deviceToken)).json().mfaRequired, true)
  t.same((await devices(accessToken)).json(), [])
  t.same(await trustedDevices.list(ada.id), [])

  const off = await mfaApp(t)
  const { secret } = await off.enable()
  const offChallenge = (await off.login()).json().mfaToken
  const answer = await off.app.inject({ method: 'POST', url: '/Auth/LoginMfa', payload: { mfaToken: offChallenge, code: totpCode(secret, currentStep() + 1), rememberDevice: true } })
  t.equal(answer.statusCode, 200, 'rememberDevice is accepted and ignored')
  const again = await off.app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD, deviceToken: answer.json().deviceToken } })
  t.equal(again.json().mfaRequired, true, 'off by default')
  t.equal((await off.app.inject({ url: '/Auth/Sessions/Devices', headers: { authorization: `Bearer ${answer.json().accessToken}` } })).statusCode, 404, 'no list while off')
})

t.test('a trust ends by itself after trustDays', async (t) => {
  const { trustedLogin, login, trustClock } = await trustApp(t, { trustDays: 2 / 86_400 })
  const { deviceToken } = await trustedLogin()
  t.equal((await login(deviceToken)).statusCode, 200)
  t.notOk('mfaRequired' in (await login(deviceToken)).json())
  trustClock.advance(2000)
  t.equal((await login(deviceToken)).json().mfaRequired, true, 'two seconds later: the code again')
})

t.test('after a password reset the trusted device needs the code again (Better Auth #2728)', async (t) => {
  const { trustedLogin, login, post, messages, app, nextCode } = await trustApp(t, { passwordReset: true })
  const { deviceToken } = await trustedLogin()
  await post('/ForgotPassword', undefined, { email: EMAIL })
  for (let i = 0; i < 100 && !messages.some((message) => message.type === 'password_reset'); i++) await sleep(5)
  const token = messages.find((message) => message.type === 'password_reset')!.token!
  t.equal((await post('/ResetPassword', undefined, { token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD, code: nextCode() })).statusCode, 204)
  const after = await login(deviceToken, NEW_PASSWORD)
  t.equal(after.statusCode, 200)
  t.equal(after.json().mfaRequired, true, 'the reset ended the trust')
  t.notOk('accessToken' in after.json())
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: NEW_PASSWORD } })).json().mfaRequired, true)
})

t.test('every trust ends at a password change, at Disable, at a new enrolment and at EndOthers', async (t) => {
  await t.test('ChangePassword', async (t) => {
    const { trustedLogin, login, changePassword, nextCode, devices, events } = await trustApp(t)
    const { deviceToken } = await trustedLogin()
    t.equal((await changePassword(changeBody({ code: nextCode() }))).statusCode, 204)
    t.equal((await login(deviceToken, NEW_PASSWORD)).json().mfaRequired, true)
    t.match(events.filter((event) => event.type === 'mfa.device_trust_ended').at(-1), { reason: 'password_changed' })
    const { accessToken } = await trustedLogin(NEW_PASSWORD, deviceToken)
    t.equal((await devices(accessToken)).json().length, 1, 'the device can be trusted again, with the new password')
  })
  await t.test('Disable, then a new set-up', async (t) => {
    const { trustedLogin, login, post, nextCode, secret, app, events } = await trustApp(t)
    const { deviceToken, accessToken } = await trustedLogin()
    t.equal((await post('/Mfa/Disable', accessToken, { code: nextCode(), password: PASSWORD })).statusCode, 204)
    t.match(events.filter((event) => event.type === 'mfa.device_trust_ended').at(-1), { reason: 'mfa_changed' })
    const fresh = (await login(deviceToken)).json().accessToken
    const setup = (await post('/Mfa/Setup', fresh)).json()
    t.not(setup.secret, secret)
    t.equal((await post('/Mfa/Confirm', fresh, { code: totpCode(setup.secret), password: PASSWORD })).statusCode, 200)
    t.equal((await login(deviceToken)).json().mfaRequired, true, 'the new enrolment trusts no device')
    t.equal((await app.inject({ url: '/Auth/Sessions/Devices', headers: { authorization: `Bearer ${fresh}` } })).json().length, 0)
  })
  await t.test('EndOthers', async (t) => {
    const { trustedLogin, login, post, bearer, app, devices } = await trustApp(t)
    const { deviceToken, accessToken } = await trustedLogin()
    const ended = await app.inject({ method: 'POST', url: '/Auth/Sessions/EndOthers', headers: bearer(accessToken) })
    t.equal(ended.statusCode, 200)
    t.same((await devices(accessToken)).json(), [])
    t.equal((await login(deviceToken)).json().mfaRequired, true)
    t.equal((await post('/Sessions/EndOthers', accessToken)).statusCode, 200, 'again: nothing left to end')
  })
  await t.test('an admin\'s resetSecondFactor', async (t) => {
    const { trustedLogin, app, ada, trustedDevices, events } = await trustApp(t)
    await trustedLogin()
    t.equal((await trustedDevices.list(ada.id)).length, 1)
    t.equal(await app.passwordAuth.admin.resetSecondFactor(ada.id, { admin: 'support:grace' }), true)
    t.same(await trustedDevices.list(ada.id), [], 'the store holds no live trust')
    t.match(events.filter((event) => event.type === 'mfa.device_trust_ended').at(-1), { reason: 'mfa_changed' })
  })
})

t.test('DELETE /Sessions/Devices/:id ends one trust: recent authentication, and 404 for an id that is not the caller\'s', async (t) => {
  const { trustedLogin, login, app, devices, bearer, accounts, ada, clock, events } = await trustApp(t)
  const laptop = await trustedLogin()
  const phone = await trustedLogin()
  const listed = (await devices(phone.accessToken)).json()
  t.equal(listed.length, 2)
  const remove = async (id: string, token: string) => await app.inject({ method: 'DELETE', url: `/Auth/Sessions/Devices/${id}`, headers: bearer(token) })
  clock.advance(-600_000)
  const stale = (await login(laptop.deviceToken)).json().accessToken
  clock.advance(600_000)
  expectProblem(t, await remove(listed[0].id, stale), 401, 'FST_PWAUTH_REAUTHENTICATION_REQUIRED')
  expectProblem(t, await remove('no-such-trust', phone.accessToken), 404, 'FST_PWAUTH_SESSION_NOT_FOUND')

  accounts.add({ email: 'bob@example.com', passwordHash: ada.passwordHash })
  const bob = (await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: 'bob@example.com', password: PASSWORD } })).json().accessToken
  expectProblem(t, await remove(listed[0].id, bob), 404, 'FST_PWAUTH_SESSION_NOT_FOUND', 'another account\'s trust answers like an unknown one')
  t.same((await devices(bob)).json(), [], 'and is not listed to him')

  const laptopTrust = listed.find((trust: { id: string }) => trust.id !== listed[1].id) as { id: string }
  t.equal((await remove(laptopTrust.id, phone.accessToken)).statusCode, 204)
  t.match(events.filter((event) => event.type === 'mfa.device_trust_ended').at(-1), { trustId: laptopTrust.id, reason: 'removed' })
  t.equal((await devices(phone.accessToken)).json().length, 1)
  const results = await Promise.all([login(laptop.deviceToken), login(phone.deviceToken)])
  t.same(results.map((r) => 'mfaRequired' in r.json()).sort(), [false, true], 'one device needs the code again, the other not')
  expectProblem(t, await app.inject({ url: '/Auth/Sessions/Devices' }), 401, 'FST_PWAUTH_TOKEN_MISSING', 'guarded')
})

t.test('races: a trust made while every trust ends is never live, and a trusted Login racing an end starts no session', async (t) => {
  let racingEnd: (() => Promise<void>) | undefined
  const { trustedLogin, login, devices, app, loginMfa } = await trustApp(t, {
    store: (clock) => wrapped(clock, (inner) => ({
      trust: async (...args) => { await racingEnd?.(); return await inner.trust(...args) },
      use: async (...args) => { const found = await inner.use(...args); await racingEnd?.(); return found }
    }))
  })
  t.teardown(() => { racingEnd = undefined })
  const { deviceToken, accessToken } = await trustedLogin()
  // An EndOthers (or a reset) lands between LoginMfa's reading of the generation and its writing of the trust.
  racingEnd = async () => { racingEnd = undefined; await app.inject({ method: 'POST', url: '/Auth/Sessions/EndOthers', headers: { authorization: `Bearer ${accessToken}` } }) }
  const challenged = await login(deviceToken)
  t.equal(challenged.json().mfaRequired, true, 'the EndOthers above ended the first trust')
  racingEnd = async () => { racingEnd = undefined; await app.inject({ method: 'POST', url: '/Auth/Sessions/EndOthers', headers: { authorization: `Bearer ${accessToken}` } }) }
  const answered = await loginMfa(challenged.json().mfaToken, { rememberDevice: true, deviceToken })
  t.equal(answered.statusCode, 200, 'the LoginMfa itself succeeds')
  t.same((await devices(accessToken)).json(), [], 'but the trust it wrote is dead (and the EndOthers ended its session too)')
  t.equal((await login(deviceToken)).json().mfaRequired, true)

  const trusted = await trustedLogin(PASSWORD, deviceToken)
  t.equal((await devices(trusted.accessToken)).json().length, 1)
  // The end lands after the Login used the trust, before its session was checked.
  racingEnd = async () => { racingEnd = undefined; await app.inject({ method: 'POST', url: '/Auth/Sessions/EndOthers', headers: { authorization: `Bearer ${trusted.accessToken}` } }) }
  const raced = await login(deviceToken)
  t.equal(raced.json().mfaRequired, true, 'the Login answers a challenge instead')
  const sessions = (await app.inject({ url: '/Auth/Sessions', headers: { authorization: `Bearer ${trusted.accessToken}` } })).json()
  t.same(sessions.map((s: { current: boolean }) => s.current), [true], 'and leaves no session behind')
})

t.test('what the store holds works as no token: keyed hashes bound to the account, its password and its enrolment', async (t) => {
  const held: unknown[] = []
  const { trustedLogin, login, changePassword, nextCode } = await trustApp(t, {
    store: (clock) => wrapped(clock, (inner) => ({
      trust: async (...args) => { held.push(args); return await inner.trust(...args) },
      // A store whose endAll fails: the binding alone still ends the trust at a password change.
      endAll: async () => { throw new Error('store down') }
    }))
  })
  const { deviceToken } = await trustedLogin()
  const [, stored] = held[0] as [string, { deviceHash: string }]
  t.notOk(JSON.stringify(held).includes(deviceToken.split('.')[0]), 'not the device id')
  t.notOk(JSON.stringify(held).includes(deviceToken), 'not the device token')
  t.match(stored.deviceHash, /^[\w-]+\.[\w-]{43}$/, '<kid>.<HMAC-SHA256>')
  t.notOk('mfaRequired' in (await login(deviceToken)).json(), 'trusted')
  t.equal((await changePassword(changeBody({ code: nextCode() }))).statusCode, 204, 'a store failure at the end of the trusts does not undo the change')
  t.equal((await login(deviceToken, NEW_PASSWORD)).json().mfaRequired, true, 'the trust died with the old password all the same')
})

t.test('the devices guide\'s block works as written', async (t) => {
  const { docBlock } = await import('../helpers/docs.js')
  const { default: Fastify } = await import('fastify')
  const { default: passwordAuth, MemoryAccountStore, hashPassword } = await import('../../lib/index.js')
  const { CHEAP_ARGON2, SECRET } = await import('../helpers/app.js')
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  const accounts = new MemoryAccountStore()
  accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const store = new MemoryTrustedDeviceStore()
  const block = docBlock('example/docs/devices.md', 'trusted-devices').replace('process.env.JWT_SECRET!', 'process.env.JWT_SECRET')
  // The block as written; only the PostgreSQL store is swapped for the memory one.
  // eslint-disable-next-line no-new-func
  const run = new Function('app', 'passwordAuth', 'accounts', 'PostgresTrustedDeviceStore', 'pool', 'process', `return (async () => { ${block} })()`)
  await run(app, passwordAuth, accounts, function () { return store }, {}, { env: { JWT_SECRET: SECRET } })
  const bearer = { authorization: `Bearer ${(await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })).json().accessToken}` }
  const { secret } = (await app.inject({ method: 'POST', url: '/Auth/Mfa/Setup', headers: bearer })).json()
  const step = currentStep()
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Mfa/Confirm', headers: bearer, payload: { code: totpCode(secret, step), password: PASSWORD } })).statusCode, 200)
  const mfaToken = (await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })).json().mfaToken
  const answer = await app.inject({ method: 'POST', url: '/Auth/LoginMfa', headers: { 'user-agent': CHROME_MAC }, payload: { mfaToken, code: totpCode(secret, step + 1), rememberDevice: true } })
  const trusts = (await app.inject({ url: '/Auth/Sessions/Devices', headers: { authorization: `Bearer ${answer.json().accessToken}` } })).json()
  t.match(trusts, [{ label: 'Chrome on macOS' }], 'sessionRoutes lists it')
  t.ok(Math.abs(Date.parse(trusts[0].trustedUntil) - Date.now() - 30 * DAY_MS) < 5000, 'for 30 days')
  const again = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD, deviceToken: answer.json().deviceToken } })
  t.type(again.json().accessToken, 'string', 'the trusted device skips the code')
})

t.test('store failures: a trust that cannot be written costs a code later, never the sign-in; EndOthers fails closed', async (t) => {
  let failing = false
  const fail = async () => { if (failing) throw new Error('store down') }
  const { login, loginMfa, devices, app, trustedLogin } = await trustApp(t, {
    store: (clock) => wrapped(clock, (inner) => ({
      trust: async (...args) => { await fail(); return await inner.trust(...args) },
      endAll: async (...args) => { await fail(); return await inner.endAll(...args) }
    }))
  })
  const { deviceToken, accessToken } = await trustedLogin()
  failing = true
  const challenged = await login()
  const answered = await loginMfa(challenged.json().mfaToken, { rememberDevice: true })
  t.equal(answered.statusCode, 200, 'the LoginMfa still signs in')
  failing = false
  t.equal((await devices(accessToken)).json().length, 1, 'only the first device is trusted')
  t.equal((await login(answered.json().deviceToken)).json().mfaRequired, true)
  failing = true
  expectProblem(t, await app.inject({ method: 'POST', url: '/Auth/Sessions/EndOthers', headers: { authorization: `Bearer ${accessToken}` } }), 503, 'FST_PWAUTH_UNAVAILABLE')
  failing = false
  t.equal((await app.inject({ url: '/me', headers: { authorization: `Bearer ${answered.json().accessToken}` } })).statusCode, 200, 'no session ended while the trusts could not')
  t.notOk('mfaRequired' in (await login(deviceToken)).json(), 'and the trust lives on, as the 503 said')
})
