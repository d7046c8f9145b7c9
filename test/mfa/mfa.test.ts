import t from 'tap'
import { MemoryMfaStore } from '../../lib/index.js'
import { decodeJwt, EMAIL, PASSWORD, PLUGIN_TIMEOUT_MS } from '../helpers/app.js'
import { currentStep, mfaApp, totpCode } from '../helpers/mfa.js'
import { expectProblem } from '../helpers/problem.js'

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

t.test('set-up: a secret and its otpauth URI, on only after a code, ten recovery codes of 120 bits shown once', async (t) => {
  const { post, token, login, messages, events, app } = await mfaApp(t)
  const accessToken = await token()
  t.same((await app.inject({ url: '/Auth/Mfa', headers: { authorization: `Bearer ${accessToken}` } })).json(), { enabled: false, recoveryCodesLeft: 0 })
  const setup = await post('/Mfa/Setup', accessToken)
  t.equal(setup.statusCode, 200)
  const { secret, otpauthUrl } = setup.json()
  t.match(secret, /^[A-Z2-7]{32}$/, '160 bits, base32')
  t.equal(otpauthUrl, `otpauth://totp/Example%20App:ada%40example.com?secret=${secret}&issuer=Example%20App`)
  t.equal((await login()).json().accessToken === undefined, false, 'not on before Confirm: Login still logs in')
  expectProblem(t, await post('/Mfa/Confirm', accessToken, { code: totpCode(secret) === '000000' ? '111111' : '000000', password: PASSWORD }), 401, 'FST_PWAUTH_MFA_CODE_INVALID')
  const confirm = await post('/Mfa/Confirm', accessToken, { code: totpCode(secret), password: PASSWORD })
  t.equal(confirm.statusCode, 200)
  const { recoveryCodes } = confirm.json()
  t.equal(recoveryCodes.length, 10)
  t.equal(new Set(recoveryCodes).size, 10)
  for (const code of recoveryCodes) t.match(code, /^[a-z2-7]{4}(-[a-z2-7]{4}){5}$/, '24 base32 characters: 120 bits')
  const status = async () => (await app.inject({ url: '/Auth/Mfa', headers: { authorization: `Bearer ${accessToken}` } })).json()
  t.same(await status(), { enabled: true, recoveryCodesLeft: 10 })
  expectProblem(t, await post('/Mfa/Setup', accessToken), 409, 'FST_PWAUTH_MFA_STATE', 'Setup while on')
  expectProblem(t, await post('/Mfa/Confirm', accessToken, { code: totpCode(secret, currentStep() + 1), password: PASSWORD }), 409, 'FST_PWAUTH_MFA_STATE', 'Confirm while on')
  await sleep(20)
  t.match(messages.filter((message) => message.type !== 'new_device_login'), [{ type: 'mfa_enabled', to: EMAIL }])
  t.ok(events.some((event) => event.type === 'mfa.enabled'))
  t.notOk(JSON.stringify(events).includes(secret), 'no event carries the secret')
  t.notOk(JSON.stringify(events).includes(recoveryCodes[0]), 'nor a recovery code')
})

t.test('Confirm without a pending Setup is a 409', async (t) => {
  const { post, token } = await mfaApp(t)
  expectProblem(t, await post('/Mfa/Confirm', await token(), { code: '123456', password: PASSWORD }), 409, 'FST_PWAUTH_MFA_STATE')
})

t.test('with two factors on, Login answers only the challenge: no session, no access, refresh or device token', async (t) => {
  const { enable, login, sessions, ada, post, refresh, me } = await mfaApp(t)
  const { accessToken } = await enable()
  const before = (await sessions.list(ada.id)).length
  const response = await login()
  t.equal(response.statusCode, 200)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['mfaExpiresIn', 'mfaRequired', 'mfaToken'])
  t.equal(body.mfaRequired, true)
  t.equal(body.mfaExpiresIn, 300)
  t.equal(response.headers['set-cookie'], undefined)
  t.equal((await sessions.list(ada.id)).length, before, 'no session was started')
  expectProblem(t, await me(body.mfaToken), 401, 'FST_PWAUTH_TOKEN_INVALID', 'the challenge is no bearer token')
  expectProblem(t, await refresh(body.mfaToken), 401, 'FST_PWAUTH_REFRESH_TOKEN_INVALID', 'nor a refresh token')
  expectProblem(t, await post('/Reauthenticate', body.mfaToken, { password: PASSWORD }), 401, 'FST_PWAUTH_TOKEN_INVALID', 'nor accepted by a guarded route')
  t.equal((await me(accessToken)).statusCode, 200, 'the session that turned them on lives on')
})

t.test('LoginMfa starts a session that says it proved a second factor; GET /secure (requireMfa) takes only such sessions', async (t) => {
  const { enable, challenge, loginMfa, app, events } = await mfaApp(t)
  const { secret, step, accessToken: setupToken } = await enable()
  const response = await loginMfa(await challenge(), totpCode(secret, step + 1))
  t.equal(response.statusCode, 200)
  const body = response.json()
  t.match(body, { accessToken: String, tokenType: 'Bearer', refreshToken: String, deviceToken: String })
  t.same(decodeJwt(body.accessToken).payload.amr, ['pwd', 'otp', 'mfa'])
  const secure = await app.inject({ url: '/secure', headers: { authorization: `Bearer ${body.accessToken}` } })
  t.equal(secure.statusCode, 200)
  const refreshed = await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: { refreshToken: body.refreshToken } })
  t.same(decodeJwt(refreshed.json().accessToken).payload.amr, ['pwd', 'otp', 'mfa'], 'a refresh keeps it')
  t.same(decodeJwt(setupToken).payload.amr, ['pwd'], 'a password-only session says so')
  t.ok(events.some((event) => event.type === 'login.succeeded' && event.mfa === true))
})

t.test('a session without a second factor is refused by requireMfa', async (t) => {
  const { app, token } = await mfaApp(t)
  const response = await app.inject({ url: '/secure', headers: { authorization: `Bearer ${await token()}` } })
  expectProblem(t, response, 401, 'FST_PWAUTH_MFA_REQUIRED')
  t.equal(response.headers['www-authenticate'], 'Bearer realm="fastify-password-auth", error="insufficient_user_authentication"')
})

t.test('no replay: the set-up code cannot log in, a code logs in once, an earlier step never after a later one', async (t) => {
  const { enable, challenge, loginMfa } = await mfaApp(t)
  const { secret, step } = await enable()
  const first = await challenge()
  expectProblem(t, await loginMfa(first, totpCode(secret, step)), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'the code Confirm used')
  t.equal((await loginMfa(first, totpCode(secret, step + 1))).statusCode, 200)
  expectProblem(t, await loginMfa(await challenge(), totpCode(secret, step + 1)), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'the same code again')
  expectProblem(t, await loginMfa(await challenge(), totpCode(secret, step - 1)), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'an earlier step')
})

t.test('of 20 concurrent LoginMfa with one code on 20 challenges exactly one logs in', async (t) => {
  const { enable, challenge, loginMfa } = await mfaApp(t)
  const { secret, step } = await enable()
  const challenges: string[] = []
  for (let i = 0; i < 20; i++) challenges.push(await challenge())
  const code = totpCode(secret, step + 1)
  const answers = await Promise.all(challenges.map(async (mfaToken) => (await loginMfa(mfaToken, code)).statusCode))
  t.equal(answers.filter((status) => status === 200).length, 1, answers.join(' '))
  t.ok(answers.every((status) => status === 200 || status === 401 || status === 429), 'the others refused (past 10 failures, by the account\'s code counter)')
})

t.test('a challenge is single-use and dies after 5 wrong codes, even for the right one then', async (t) => {
  const { enable, challenge, loginMfa } = await mfaApp(t)
  const { recoveryCodes } = await enable()
  const used = await challenge()
  t.equal((await loginMfa(used, recoveryCodes[0])).statusCode, 200)
  expectProblem(t, await loginMfa(used, recoveryCodes[1]), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'used')
  const guessed = await challenge()
  for (let i = 0; i < 5; i++) expectProblem(t, await loginMfa(guessed, `${100000 + i}`), 401, 'FST_PWAUTH_MFA_CODE_INVALID', `wrong code ${i + 1}`)
  expectProblem(t, await loginMfa(guessed, recoveryCodes[1]), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'the right code after 5 wrong ones')
  t.equal((await loginMfa(await challenge(), recoveryCodes[1])).statusCode, 200, 'that code still works with a new challenge: it was not used')
  expectProblem(t, await loginMfa('not-a-challenge', '123456'), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'an unknown challenge')
})

t.test('a challenge expires after mfa.ttl, and dies with a password change', async (t) => {
  const { enable, challenge, loginMfa, changePassword } = await mfaApp(t, { mfa: { issuer: 'Example App', ttl: 30 } })
  const { recoveryCodes } = await enable()
  const expiring = await challenge()
  // 31 s later on the clock the memory stores read (a recovery code does not depend on the time).
  const realNow = Date.now
  Date.now = () => realNow() + 31_000
  try {
    expectProblem(t, await loginMfa(expiring, recoveryCodes[1]), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'a challenge past mfa.ttl')
  } finally {
    Date.now = realNow
  }
  const beforeChange = await challenge()
  const { NEW_PASSWORD } = await import('../helpers/app.js')
  t.equal((await changePassword({ email: EMAIL, currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD, code: recoveryCodes[2] })).statusCode, 204)
  expectProblem(t, await loginMfa(beforeChange, recoveryCodes[0]), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'a challenge from before the change')
  t.equal((await loginMfa(await challenge(EMAIL, NEW_PASSWORD), recoveryCodes[0])).statusCode, 200)
})

t.test('second-factor failures have their own per-account counter: 10 free, then 429; the password counter never moves', async (t) => {
  const { enable, challenge, loginMfa, login, events } = await mfaApp(t)
  const { recoveryCodes } = await enable()
  for (let round = 0; round < 2; round++) {
    const mfaToken = await challenge()
    for (let i = 0; i < 5; i++) t.equal((await loginMfa(mfaToken, `${200000 + round * 5 + i}`)).statusCode, 401)
  }
  const blocked = await loginMfa(await challenge(), recoveryCodes[0])
  expectProblem(t, blocked, 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'the 11th code, right or wrong')
  t.ok(Number(blocked.headers['retry-after']) >= 1)
  t.equal((await login()).json().mfaRequired, true, 'the password still checks: the e-mail was never blocked')
  t.ok(events.some((event) => event.type === 'mfa.failed' && event.reason === 'throttled'))
  t.notOk(events.some((event) => event.type === 'login.throttled' || event.type === 'login.blocked'), 'no password throttling at all')
})

t.test('recovery codes: each works once, RecoveryCodes (TOTP only) replaces them all', async (t) => {
  const { enable, challenge, loginMfa, post } = await mfaApp(t)
  const { secret, recoveryCodes, step, accessToken } = await enable()
  t.equal((await loginMfa(await challenge(), recoveryCodes[3]!.toUpperCase().replaceAll('-', ' '))).statusCode, 200, 'case and separators do not matter')
  expectProblem(t, await loginMfa(await challenge(), recoveryCodes[3]), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'used once')
  expectProblem(t, await post('/Mfa/RecoveryCodes', accessToken, { code: recoveryCodes[4], password: PASSWORD }), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'a recovery code cannot replace them')
  const replaced = await post('/Mfa/RecoveryCodes', accessToken, { code: totpCode(secret, step + 1), password: PASSWORD })
  t.equal(replaced.statusCode, 200)
  const fresh: string[] = replaced.json().recoveryCodes
  t.equal(fresh.length, 10)
  expectProblem(t, await loginMfa(await challenge(), recoveryCodes[5]), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'an old code after the replacement')
  t.equal((await loginMfa(await challenge(), fresh[0])).statusCode, 200)
})

t.test('turning two factors on or off ends every other session and sends a message; off, Login logs in again', async (t) => {
  const { enable, challenge, loginMfa, login, me, post, token, messages } = await mfaApp(t)
  const other = await token()
  const { recoveryCodes, accessToken } = await enable()
  expectProblem(t, await me(other), 401, 'FST_PWAUTH_TOKEN_INVALID', 'a session from before, on')
  const second = (await loginMfa(await challenge(), recoveryCodes[0])).json().accessToken
  expectProblem(t, await post('/Mfa/Disable', accessToken, { code: '000000', password: PASSWORD }), 401, 'FST_PWAUTH_MFA_CODE_INVALID')
  t.equal((await post('/Mfa/Disable', accessToken, { code: recoveryCodes[1], password: PASSWORD })).statusCode, 204)
  expectProblem(t, await me(second), 401, 'FST_PWAUTH_TOKEN_INVALID', 'another session, off')
  t.equal((await me(accessToken)).statusCode, 200, 'the session that turned them off lives on')
  t.match((await login()).json(), { accessToken: String })
  await sleep(20)
  t.same(messages.map((message) => message.type).filter((type) => type !== 'new_device_login'), ['mfa_enabled', 'mfa_code_failed', 'mfa_disabled'], 'the wrong code at Disable came after the right password: the owner hears it')
  expectProblem(t, await post('/Mfa/Disable', accessToken, { code: recoveryCodes[2], password: PASSWORD }), 409, 'FST_PWAUTH_MFA_STATE', 'off already: the state before the code')
})

t.test('the set-up routes need the access token, and no recent authentication', async (t) => {
  const { post, token, clock } = await mfaApp(t)
  for (const route of ['/Mfa/Setup', '/Mfa/Confirm', '/Mfa/RecoveryCodes', '/Mfa/Disable']) {
    expectProblem(t, await post(route, undefined, route === '/Mfa/Setup' ? undefined : { code: '123456' }), 401, 'FST_PWAUTH_TOKEN_MISSING', route)
  }
  clock.advance(-400_000)
  const stale = await token()
  clock.advance(400_000)
  t.equal((await post('/Mfa/Setup', stale)).statusCode, 200, 'Setup on an old session: it changes nothing until Confirm')
})

t.test('Reauthenticate takes a code with two factors on', async (t) => {
  const { enable, post } = await mfaApp(t)
  const { accessToken, recoveryCodes } = await enable()
  expectProblem(t, await post('/Reauthenticate', accessToken, { password: PASSWORD }), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'no code')
  expectProblem(t, await post('/Reauthenticate', accessToken, { password: PASSWORD, code: '12345' }), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'a wrong code')
  expectProblem(t, await post('/Reauthenticate', accessToken, { password: 'wrong password here', code: recoveryCodes[0] }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS')
  t.equal((await post('/Reauthenticate', accessToken, { password: PASSWORD, code: recoveryCodes[0] })).statusCode, 204)
})

t.test('ResetPassword does not bypass the second factor: a code is needed, and 5 wrong codes kill the link', async (t) => {
  const { enable, post, messages, login } = await mfaApp(t, { passwordReset: true })
  const { recoveryCodes } = await enable()
  const resetToken = async (): Promise<string> => {
    await post('/ForgotPassword', undefined, { email: EMAIL })
    for (let i = 0; i < 100 && messages.at(-1)?.type !== 'password_reset'; i++) await sleep(5)
    return messages.at(-1)!.token!
  }
  const body = (token: string, code?: string) => ({ token, newPassword: 'a fresh passphrase for the reset', confirmNewPassword: 'a fresh passphrase for the reset', ...code === undefined ? {} : { code } })
  const first = await resetToken()
  expectProblem(t, await post('/ResetPassword', undefined, body(first)), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'no code')
  for (let i = 0; i < 5; i++) expectProblem(t, await post('/ResetPassword', undefined, body(first, `${300000 + i}`)), 401, 'FST_PWAUTH_MFA_CODE_INVALID')
  expectProblem(t, await post('/ResetPassword', undefined, body(first, recoveryCodes[0])), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID', 'dead after 5 wrong codes')
  const second = await resetToken()
  t.equal((await post('/ResetPassword', undefined, body(second, recoveryCodes[0]))).statusCode, 204)
  t.equal((await login(EMAIL, 'a fresh passphrase for the reset')).json().mfaRequired, true, 'two factors stay on after a reset')
})

t.test('nothing the store holds yields a code: the secret is sealed, recovery codes are keyed hashes', async (t) => {
  const store = new MemoryMfaStore()
  const { enable, ada } = await mfaApp(t, { mfa: { store } })
  const { secret, recoveryCodes } = await enable()
  const record = (await store.get(ada.id))!
  t.match(record.secret, /^v1\.hs-[\w-]+\.[\w-]{16}\.[\w-]+$/, 'AES-256-GCM, with the key id')
  const held = JSON.stringify(record)
  t.notOk(held.includes(secret) || held.toLowerCase().includes(secret.toLowerCase()), 'no secret')
  for (const code of recoveryCodes) t.notOk(held.includes(code) || held.includes(code.replaceAll('-', '')), 'no recovery code')
  t.equal(record.recoveryCodes.length, 10)
})

t.test('a sealed secret opens after the signing key rotates, and recovery codes still work', async (t) => {
  const store = new MemoryMfaStore()
  const { MemoryAccountStore, hashPassword } = await import('../../lib/index.js')
  const { CHEAP_ARGON2, SECRET } = await import('../helpers/app.js')
  const accounts = new MemoryAccountStore()
  accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const first = await mfaApp(t, { mfa: { store }, accounts })
  const { secret, recoveryCodes, step } = await first.enable()
  const NEW_SECRET = 'another-test-secret-of-at-least-32-bytes'
  const rotated = await mfaApp(t, { mfa: { store }, accounts, jwt: { keys: [{ secret: NEW_SECRET }, { secret: SECRET }] } })
  t.equal((await rotated.loginMfa(await rotated.challenge(), totpCode(secret, step + 1))).statusCode, 200, 'TOTP under the old key')
  t.equal((await rotated.loginMfa(await rotated.challenge(), recoveryCodes[0])).statusCode, 200, 'a recovery code hashed under the old key')
  const removed = await mfaApp(t, { mfa: { store }, accounts, jwt: { secret: NEW_SECRET } })
  expectProblem(t, await removed.loginMfa(await removed.challenge(), recoveryCodes[1]), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'the old key removed: its codes fail closed')
})

t.test('mfa options are checked', async (t) => {
  const { authOptions } = await import('../helpers/app.js')
  const Fastify = (await import('fastify')).default
  const { default: passwordAuth } = await import('../../lib/index.js')
  for (const [options, message] of [
    [{ mfa: 'yes' }, /mfa must be true, false or \{ issuer, ttl, store, trustDays, trustedDevices \}/],
    [{ mfa: { trustDays: -1 } }, /mfa.trustDays must be a number of days from 0 \(off\) to 400/],
    [{ mfa: { trustDays: 401 } }, /mfa.trustDays/],
    [{ mfa: { trustDays: '30' } }, /mfa.trustDays/],
    [{ mfa: { trustDays: 0.1 / 86_400 } }, /at least 1 second/],
    [{ mfa: { trustDay: 30 } }, /unknown option mfa.trustDay: did you mean mfa.trustDays\?/],
    [{ mfa: { trustDays: 30, trustedDevices: {} } }, /"mfa.trustedDevices" store has no method generation\(\)/],
    [{ mfa: { issuer: 'a:b' } }, /mfa.issuer/],
    [{ mfa: { isuer: 'x' } }, /isuer/],
    [{ mfa: { ttl: 0 } }, /mfa\.ttl must be a whole number of seconds from 1/],
    [{ mfa: { store: {} } }, /"mfa\.store" store has no method get\(\)/]
  ] as const) {
    const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
    t.teardown(async () => { await app.close() })
    await t.rejects(async () => { await app.register(passwordAuth, { ...await authOptions(), ...options } as never).ready() }, { message }, JSON.stringify(options))
  }
})

t.test('the README\'s two-factor block and the guide\'s route work as written', async (t) => {
  const { readmeBlock, docBlock } = await import('../helpers/docs.js')
  const { default: Fastify } = await import('fastify')
  const { default: passwordAuth, authenticated, MemoryAccountStore, hashPassword } = await import('../../lib/index.js')
  const { CHEAP_ARGON2, SECRET } = await import('../helpers/app.js')
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  const accounts = new MemoryAccountStore()
  const ada = accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const block = readmeBlock('mfa-options').replace('process.env.JWT_SECRET!', 'process.env.JWT_SECRET')
  // The block as written; only the PostgreSQL store is swapped for the memory one.
  // eslint-disable-next-line no-new-func
  const run = new Function('app', 'passwordAuth', 'accounts', 'PostgresMfaStore', 'pool', 'authenticated', 'process', `return (async () => { ${block} })()`)
  await run(app, passwordAuth, accounts, function () { return new MemoryMfaStore() }, {}, authenticated, { env: { JWT_SECRET: SECRET } })
  // eslint-disable-next-line no-new-func
  new Function('app', 'authenticated', docBlock('example/docs/two-factors.md', 'mfa-route'))(app, authenticated)
  const login = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })
  const bearer = { authorization: `Bearer ${login.json().accessToken}` }
  expectProblem(t, await app.inject({ url: '/payouts', headers: bearer }), 401, 'FST_PWAUTH_MFA_REQUIRED', 'GET /payouts, password only')
  expectProblem(t, await app.inject({ method: 'POST', url: '/payouts', headers: bearer }), 401, 'FST_PWAUTH_MFA_REQUIRED', 'POST /payouts, password only')
  const { secret } = (await app.inject({ method: 'POST', url: '/Auth/Mfa/Setup', headers: bearer })).json()
  const step = currentStep()
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Mfa/Confirm', headers: bearer, payload: { code: totpCode(secret, step), password: PASSWORD } })).statusCode, 200)
  const challenge = (await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })).json().mfaToken
  const second = await app.inject({ method: 'POST', url: '/Auth/LoginMfa', payload: { mfaToken: challenge, code: totpCode(secret, step + 1) } })
  const mfaBearer = { authorization: `Bearer ${second.json().accessToken}` }
  const paid = await app.inject({ url: '/payouts', headers: mfaBearer })
  t.equal(paid.statusCode, 200)
  t.equal(paid.body, ada.id, 'the README\'s route answers the account id')
  t.same((await app.inject({ method: 'POST', url: '/payouts', headers: mfaBearer })).json(), { paidBy: ada.id }, 'and the guide\'s')
})

t.test('cookie mode: Login of an account with two factors sets no cookie; LoginMfa sets the refresh and device cookies', async (t) => {
  const { enable, app, loginMfa } = await mfaApp(t, { refresh: { cookie: true } })
  const { recoveryCodes } = await enable()
  const login = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })
  t.same(Object.keys(login.json()).sort(), ['mfaExpiresIn', 'mfaRequired', 'mfaToken'])
  t.equal(login.headers['set-cookie'], undefined, 'no refresh or device cookie before the second factor')
  const second = await loginMfa(login.json().mfaToken, recoveryCodes[0])
  t.equal(second.statusCode, 200)
  const cookies = [second.headers['set-cookie']].flat().join('\n')
  t.match(cookies, /-refresh=.*HttpOnly/)
  t.match(cookies, /-device=.*HttpOnly/)
  t.equal(second.json().refreshToken, undefined, 'the refresh token travels in its cookie')
})

t.test('Logout with a challenge instead of an access token is refused, and leaves nothing half signed in', async (t) => {
  const { enable, challenge, post, sessions, ada, loginMfa } = await mfaApp(t)
  const { recoveryCodes } = await enable()
  const before = (await sessions.list(ada.id)).length
  const mfaToken = await challenge()
  expectProblem(t, await post('/Logout', mfaToken), 401, 'FST_PWAUTH_TOKEN_INVALID')
  t.equal((await sessions.list(ada.id)).length, before, 'no session came of it')
  t.equal((await loginMfa(mfaToken, recoveryCodes[0])).statusCode, 200, 'the challenge is still only a challenge')
})
