import t, { type Test } from 'tap'
import { hashPassword, type AuthEvent } from '../../lib/index.js'
import { buildTestApp, changeBody, CHEAP_ARGON2, EMAIL, PASSWORD, SECRET } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

const WRONG = 'not the password, sorry'
const BOB = 'bob@example.com'
const BOB_PASSWORD = 'bob has a long passphrase'
const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

/** An app with short blocks, its events, and Login with an optional device token. */
async function deviceApp (t: Test, auth: Record<string, unknown> = {}) {
  const events: AuthEvent[] = []
  const built = await buildTestApp(t, { auth: { throttle: { blockSeconds: 1, maxBlockSeconds: 1 }, onEvent: (event) => { events.push(event) }, ...auth } })
  built.accounts.add({ email: BOB, passwordHash: await hashPassword(BOB_PASSWORD, CHEAP_ARGON2) })
  const login = async (password: string, deviceToken?: unknown, email = EMAIL) =>
    await built.app.inject({ method: 'POST', url: '/Auth/Login', payload: deviceToken === undefined ? { email, password } : { email, password, deviceToken } })
  const deviceToken = async (email = EMAIL, password = PASSWORD): Promise<string> => {
    const response = await login(password, undefined, email)
    t.equal(response.statusCode, 200, 'the owner logs in')
    return response.json().deviceToken
  }
  const blockEmail = async () => {
    for (let i = 0; i < 5; i++) await login(WRONG)
    t.equal((await login(PASSWORD)).statusCode, 429, 'the e-mail is blocked for everyone without a device token')
  }
  return { ...built, events, login, deviceToken, blockEmail }
}

t.test('Login answers a device token bound to the e-mail; Refresh does not', async (t) => {
  const { login, app } = await deviceApp(t)
  const body = (await login(PASSWORD)).json()
  t.match(body.deviceToken, /^[\w-]{22}\.[0-9a-z]+\.[\w-]{43}$/)
  t.not(body.deviceToken, body.refreshToken)
  const refreshed = await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: { refreshToken: body.refreshToken } })
  t.equal(refreshed.statusCode, 200)
  t.notOk('deviceToken' in refreshed.json())
})

t.test('a stranger holding the block round after round cannot keep the owner\'s known device out', async (t) => {
  const { login, deviceToken, app } = await deviceApp(t)
  const device = await deviceToken()
  for (let round = 1; round <= 4; round++) {
    // The stranger spends the free failures (first round) or the one attempt a block's end allows.
    for (let i = 0; i < (round === 1 ? 5 : 1); i++) t.equal((await login(WRONG)).statusCode, 401, `round ${round}: the stranger's guess is verified`)
    t.equal((await login(PASSWORD)).statusCode, 429, `round ${round}: without a device token even the right password waits`)
    const owner = await login(PASSWORD, device)
    t.equal(owner.statusCode, 200, `round ${round}: the owner's known device logs in`)
    await sleep(1050)
  }
  t.equal(app.passwordAuth.stats().verifications, 1 + 5 + 3 + 4, 'the stranger got one guess per block, no more')
})

t.test('a device\'s failures count on its own counter: its block leaves the e-mail and other devices alone', async (t) => {
  const { login, deviceToken, events } = await deviceApp(t)
  const first = await deviceToken()
  const second = await deviceToken()
  for (let i = 1; i <= 5; i++) t.equal((await login(WRONG, first)).statusCode, 401, `device failure ${i}`)
  const blocked = await login(PASSWORD, first)
  expectProblem(t, blocked, 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS')
  t.equal(blocked.headers['retry-after'], '1')
  t.equal((await login(PASSWORD, second)).statusCode, 200, 'another device of the owner')
  t.equal((await login(PASSWORD)).statusCode, 200, 'the e-mail counter never saw the device\'s failures')
  t.match(events.filter((event) => event.type === 'login.throttled'), [{ device: true, email: EMAIL }])
  t.match(events.filter((event) => event.type === 'login.blocked'), [{ device: true, email: EMAIL, seconds: 1 }], 'the device block is reported once')
})

t.test('forged, foreign, expired or malformed device tokens are ignored: judged on the e-mail counter, never an error', async (t) => {
  const { login, deviceToken, blockEmail, events } = await deviceApp(t, { throttle: { blockSeconds: 30 } })
  const own = await deviceToken()
  const bobs = await deviceToken(BOB, BOB_PASSWORD)
  await blockEmail()
  const last = own.at(-1) === 'A' ? 'B' : 'A'
  const forged = own.slice(0, -1) + last
  const [id, expiry, mac] = own.split('.')
  const extended = `${id}.${(parseInt(expiry!, 36) + 86_400).toString(36)}.${mac}`
  for (const [what, token] of [['forged', forged], ['another e-mail\'s', bobs], ['extended', extended], ['garbage', 'x'], ['empty', ''], ['long', 'a'.repeat(5000)]]) {
    const response = await login(PASSWORD, token)
    t.equal(response.statusCode, 429, `${what}: judged as if it had none`)
  }
  t.equal((await login(PASSWORD, own)).statusCode, 200, 'the live token of this e-mail')
  t.ok(events.filter((event) => event.type === 'login.throttled').every((event) => event.type === 'login.throttled' && !event.device))
  expectProblem(t, await login(PASSWORD, 42), 400, 'FST_PWAUTH_VALIDATION')

  // Expiry in an app of its own: a token of deviceTtl 1 s is dead 1.1 s after it was minted, however slow the machine.
  const short = await deviceApp(t, { throttle: { blockSeconds: 30, deviceTtl: 1 } })
  const expiring = await short.deviceToken()
  await sleep(1100)
  await short.blockEmail()
  t.equal((await short.login(PASSWORD, expiring)).statusCode, 429, 'expired (deviceTtl 1 s)')
})

t.test('200 parallel wrong guesses with one device token get at most 5 verifications', async (t) => {
  const { login, deviceToken, app } = await deviceApp(t)
  const device = await deviceToken()
  const before = app.passwordAuth.stats().verifications
  const statuses = (await Promise.all(Array.from({ length: 200 }, async () => await login(WRONG, device)))).map((response) => response.statusCode)
  const verified = app.passwordAuth.stats().verifications - before
  t.ok(verified <= 5, `${verified} verifications`)
  t.equal(statuses.filter((status) => status === 401).length, verified)
  t.equal(statuses.filter((status) => status === 429).length, 200 - verified)
})

t.test('the device keeps its id and counter across logins', async (t) => {
  const { login, deviceToken } = await deviceApp(t)
  const first = await deviceToken()
  for (let i = 0; i < 4; i++) await login(WRONG, first)
  const second = (await login(PASSWORD, first)).json().deviceToken
  t.equal(second.split('.')[0], first.split('.')[0], 'the same device id')
  for (let i = 0; i < 5; i++) t.equal((await login(WRONG, second)).statusCode, 401, 'the success reset the device\'s count')
  t.equal((await login(PASSWORD, second)).statusCode, 429)
  t.equal((await login(PASSWORD, first)).statusCode, 429, 'the older token names the same, blocked device')
})

t.test('login.blocked is reported once per block of the e-mail, with the account', async (t) => {
  const { login, events, ada } = await deviceApp(t)
  for (let i = 0; i < 7; i++) await login(WRONG)
  await sleep(1050)
  await login(WRONG)
  const blocked = events.filter((event) => event.type === 'login.blocked')
  t.match(blocked, [{ email: EMAIL, accountId: ada.id, device: false, seconds: 1 }, { email: EMAIL, device: false }])
  t.equal(blocked.length, 2, 'the fifth failure and the one after the block')
  t.match(events.filter((event) => event.type === 'login.throttled'), [{ device: false }, { device: false }])
})

t.test('ChangePassword and Reauthenticate are judged on the device counter too', async (t) => {
  const { login, deviceToken, blockEmail, changePassword, app, events } = await deviceApp(t, { sessionRoutes: true })
  const device = await deviceToken()
  const { accessToken } = (await login(PASSWORD, device)).json()
  await blockEmail()
  const reauthenticate = async (deviceToken?: string) => await app.inject({
    method: 'POST', url: '/Auth/Reauthenticate', headers: { authorization: `Bearer ${accessToken}` }, payload: { password: PASSWORD, deviceToken }
  })
  t.equal((await reauthenticate()).statusCode, 429)
  t.equal((await reauthenticate(device)).statusCode, 204)
  t.equal((await changePassword(changeBody())).statusCode, 429)
  t.match(events.filter((event) => event.type === 'password.change_failed'), [{ reason: 'throttled', device: false }])
  t.equal((await changePassword(changeBody({ deviceToken: device }))).statusCode, 204)
})

t.test('cookie mode: the device token is an HttpOnly, Secure, SameSite=Strict cookie of the refresh cookie\'s path', async (t) => {
  const { app, blockEmail } = await deviceApp(t, { refresh: { cookie: true }, throttle: { blockSeconds: 30, deviceTtl: 3600 } })
  const response = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })
  t.notOk('deviceToken' in response.json(), 'not in the body')
  const lines = ([] as string[]).concat(response.headers['set-cookie'] as string | string[])
  const device = lines.find((line) => line.startsWith('__Secure-fastify-password-auth-device='))
  t.match(device, /^__Secure-fastify-password-auth-device=[\w-]{22}\.[0-9a-z]+\.[\w-]{43}; Max-Age=3600; Path=\/Auth; HttpOnly; Secure; SameSite=Strict$/)
  const cookie = device!.split(';')[0]!
  await blockEmail()
  const withCookie = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD }, headers: { cookie } })
  t.equal(withCookie.statusCode, 200, 'the cookie makes the device known')
  const twice = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD }, headers: { cookie: `${cookie}; ${cookie}` } })
  t.equal(twice.statusCode, 429, 'two device cookies (one may be planted): neither is used')
})

t.test('rotating the signing key keeps the devices known with the earlier key', async (t) => {
  const events: AuthEvent[] = []
  const first = await buildTestApp(t, { auth: { throttle: { blockSeconds: 30 } } })
  const device = (await first.login()).json().deviceToken
  const NEW_SECRET = 'another-secret-of-at-least-32-bytes!!'
  // The same accounts: a token is bound to the account, and each test app makes an Ada of its own.
  const { accounts } = first
  const rotated = await buildTestApp(t, { auth: { accounts, jwt: { keys: [{ secret: NEW_SECRET }, { secret: SECRET }] }, throttle: { blockSeconds: 30 }, onEvent: (event) => { events.push(event) } } })
  for (let i = 0; i < 5; i++) await rotated.login(EMAIL, WRONG)
  const login = async (payload: object) => await rotated.app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD, ...payload } })
  t.equal((await login({})).statusCode, 429)
  t.equal((await login({ deviceToken: device })).statusCode, 200, 'a token of the earlier key')
  const removed = await buildTestApp(t, { auth: { accounts, jwt: { secret: NEW_SECRET }, throttle: { blockSeconds: 30 } } })
  for (let i = 0; i < 5; i++) await removed.login(EMAIL, WRONG)
  t.equal((await removed.app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD, deviceToken: device } })).statusCode, 429, 'not once that key is gone')
})

t.test('throttle.deviceTtl must be a whole number of seconds', async (t) => {
  for (const deviceTtl of [0, 1.5, '60', 400 * 86_400 + 1]) {
    await t.rejects(buildTestApp(t, { auth: { throttle: { deviceTtl: deviceTtl as number } } }), /throttle\.deviceTtl must be a whole number of seconds/)
  }
})

t.test('a password change or reset ends every device token minted before it: a thief keeps no private budget', async (t) => {
  const messages: Array<{ type: string, token?: string }> = []
  const { login, deviceToken, blockEmail, changePassword, app } = await deviceApp(t, { passwordReset: true, deliver: (message: { type: string, token?: string }) => { messages.push(message) } })
  const thief = await deviceToken()
  t.equal((await changePassword(changeBody({ deviceToken: thief }))).statusCode, 204, 'the owner changes her password')
  await blockEmail()
  expectProblem(t, await login('a guess at the new password', thief), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'the old device token is judged on the blocked e-mail counter')
  await sleep(1050)
  const owner = await login(changeBody().newPassword as string)
  t.equal(owner.statusCode, 200)
  const fresh = owner.json().deviceToken as string
  t.equal((await app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: { email: EMAIL } })).statusCode, 202)
  await sleep(50)
  const token = messages.find((message) => message.type === 'password_reset')!.token
  const reset = await app.inject({ method: 'POST', url: '/Auth/ResetPassword', payload: { token, newPassword: 'a third passphrase for ada', confirmNewPassword: 'a third passphrase for ada' } })
  t.equal(reset.statusCode, 204)
  await blockEmail()
  expectProblem(t, await login('a guess', fresh), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'nor one minted before the reset')
})

t.test('an address deleted and registered again is a new account: the old account\'s device tokens prove nothing for it', async (t) => {
  const { login, deviceToken, blockEmail, accounts } = await deviceApp(t, { throttle: { blockSeconds: 30 } })
  const old = await deviceToken()
  const before = (await accounts.findByEmail(EMAIL))!
  t.ok(await accounts.delete(before.id))
  const again = (await accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) }))!
  t.not(again.id, before.id)
  t.equal(again.credentialVersion, before.credentialVersion, 'the same e-mail and credential version as the old token\'s')
  const fresh = await deviceToken()
  await blockEmail()
  expectProblem(t, await login(PASSWORD, old), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'the old account\'s token is judged on the blocked e-mail counter')
  t.equal((await login(PASSWORD, fresh)).statusCode, 200, 'the new account\'s own token is known')
})
