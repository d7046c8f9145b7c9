import t from 'tap'
import { hashPassword } from '../../lib/index.js'
import { buildTestApp, CHEAP_ARGON2, decodeJwt, EMAIL, PASSWORD } from '../helpers/app.js'

t.test('a correct login answers 200 with a bearer token and no-store', async (t) => {
  const { login, ada } = await buildTestApp(t)
  const response = await login()
  t.equal(response.statusCode, 200)
  t.equal(response.headers['cache-control'], 'no-store')
  t.match(response.headers['content-type'], /^application\/json/)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['accessToken', 'deviceToken', 'expiresIn', 'refreshExpiresIn', 'refreshToken', 'tokenType'])
  t.equal(body.tokenType, 'Bearer')
  t.equal(body.expiresIn, 900)
  t.equal(body.refreshExpiresIn, 604_800, 'the idle limit: 7 days')
  t.type(body.refreshToken, 'string')
  t.ok(body.refreshToken.length <= 1024)

  const { header, payload } = decodeJwt(body.accessToken)
  t.same(Object.keys(header), ['alg', 'typ', 'kid'])
  t.match(header, { alg: 'HS256', typ: 'at+jwt', kid: /^hs-[\w-]{22}$/ })
  t.equal(Buffer.from(payload.sid as string, 'base64url').length, 16, 'sid carries 128 random bits')
  t.notOk(body.refreshToken.includes(payload.jti), 'the refresh token is not derived from the access token')
  t.equal(payload.sub, ada.id, 'sub is the account id')
  t.notOk(JSON.stringify(payload).includes(EMAIL), 'the token does not carry the e-mail address')
  t.equal(payload.iss, 'fastify-password-auth')
  t.equal(payload.aud, 'fastify-password-auth')
  t.equal(payload.cv, 0, 'carries the credential version')
  t.equal((payload.exp as number) - (payload.iat as number), 900, 'lives expiresIn seconds')
  t.ok(Math.abs((payload.iat as number) - Date.now() / 1000) < 5, 'issued now')
  t.equal(Buffer.from(payload.jti as string, 'base64url').length, 16, 'jti carries 128 random bits')
})

t.test('every login gets a token of its own', async (t) => {
  const { token } = await buildTestApp(t)
  const first = decodeJwt(await token()).payload
  const second = decodeJwt(await token()).payload
  t.not(first.jti, second.jti)
})

t.test('lifetime, issuer and audience are options', async (t) => {
  const { login } = await buildTestApp(t, { auth: { jwt: { secret: 'another-secret-that-is-32-bytes-or-more', expiresIn: 60, issuer: 'https://id.example', audience: 'api' } } })
  const body = (await login()).json()
  t.equal(body.expiresIn, 60)
  const { payload } = decodeJwt(body.accessToken)
  t.equal((payload.exp as number) - (payload.iat as number), 60)
  t.equal(payload.iss, 'https://id.example')
  t.equal(payload.aud, 'api')
})

t.test('the e-mail address is trimmed and compared case-insensitively', async (t) => {
  const { login } = await buildTestApp(t)
  t.equal((await login('  ADA@Example.COM\t', PASSWORD)).statusCode, 200)
})

t.test('the password is used exactly as sent: not trimmed, not case-folded', async (t) => {
  const { login } = await buildTestApp(t)
  t.equal((await login(EMAIL, ` ${PASSWORD}`)).statusCode, 401)
  t.equal((await login(EMAIL, `${PASSWORD} `)).statusCode, 401)
  t.equal((await login(EMAIL, PASSWORD.toUpperCase())).statusCode, 401)
  t.equal((await login(EMAIL, PASSWORD.slice(0, -1))).statusCode, 401)
})

t.test('passwords are NFC-normalised before hashing and verifying', async (t) => {
  const { login, accounts } = await buildTestApp(t)
  const composed = 'caf\u00e9 au lait, s\u2019il vous pla\u00eet'
  const decomposed = composed.normalize('NFD')
  t.not(composed, decomposed)
  accounts.add({ email: 'nfc@example.com', passwordHash: await hashPassword(decomposed, CHEAP_ARGON2) })
  t.equal((await login('nfc@example.com', composed)).statusCode, 200, 'composed form matches a hash of the decomposed form')
  t.equal((await login('nfc@example.com', decomposed)).statusCode, 200)
})

t.test('unknown e-mail, wrong password and inactive account get the same 401', async (t) => {
  const { login, accounts } = await buildTestApp(t)
  const inactive = accounts.add({ email: 'gone@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2), active: false })
  t.equal(inactive.active, false)

  const answers = [
    await login('nobody@example.com', PASSWORD),
    await login(EMAIL, 'not the password at all'),
    await login('gone@example.com', PASSWORD)
  ]
  const comparable = answers.map((response) => {
    const { date, ...headers } = response.headers
    return { status: response.statusCode, headers, body: response.body }
  })
  t.equal(comparable[0]!.status, 401)
  t.same(comparable[1], comparable[0], 'wrong password looks like unknown e-mail')
  t.same(comparable[2], comparable[0], 'inactive account looks like unknown e-mail')
  t.equal(answers[0]!.headers['www-authenticate'], 'Bearer realm="fastify-password-auth"')
  t.equal(answers[0]!.headers['cache-control'], 'no-store')
  t.same(answers[0]!.json(), {
    type: 'urn:fastify-password-auth:problem:invalid-credentials',
    title: 'Invalid credentials',
    status: 401,
    detail: 'The e-mail address or password is incorrect, or the account cannot sign in.',
    code: 'FST_PWAUTH_INVALID_CREDENTIALS'
  })
})

t.test('every failure costs exactly one argon2 verification, like a success', async (t) => {
  const { app, login, accounts } = await buildTestApp(t)
  accounts.add({ email: 'gone@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2), active: false })
  const cases: Array<[string, string, number]> = [
    ['unknown e-mail', 'nobody@example.com', 401],
    ['inactive account', 'gone@example.com', 401],
    ['wrong password', EMAIL, 401],
    ['right password', EMAIL, 200]
  ]
  for (const [name, email, status] of cases) {
    const before = app.passwordAuth.stats().verifications
    const response = await login(email, name === 'right password' || name === 'inactive account' ? PASSWORD : 'wrong password!')
    t.equal(response.statusCode, status, name)
    t.equal(app.passwordAuth.stats().verifications - before, 1, `${name}: one verification`)
  }
  t.equal(app.passwordAuth.stats().hashes, 0, 'no hashing on login')
})

t.test('the realm of the challenge is an option', async (t) => {
  const { login } = await buildTestApp(t, { auth: { realm: 'example api' } })
  t.equal((await login(EMAIL, 'wrong password!')).headers['www-authenticate'], 'Bearer realm="example api"')
})

t.test('the route prefix is an option and leaves other paths alone', async (t) => {
  const { app } = await buildTestApp(t, { auth: { prefix: '/v1/auth' } })
  const response = await app.inject({ method: 'POST', url: '/v1/auth/Login', payload: { email: EMAIL, password: PASSWORD } })
  t.equal(response.statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })).statusCode, 404)
})

t.test('paths are case-sensitive', async (t) => {
  const { app } = await buildTestApp(t)
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { email: EMAIL, password: PASSWORD } })).statusCode, 404)
})

t.test('an account whose stored hash is not a valid argon2 string cannot log in', async (t) => {
  const { login, accounts, app } = await buildTestApp(t)
  accounts.add({ email: 'broken@example.com', passwordHash: '$2b$10$notanargon2hashatall' })
  const response = await login('broken@example.com', PASSWORD)
  t.equal(response.statusCode, 401)
  t.equal(response.json().code, 'FST_PWAUTH_INVALID_CREDENTIALS')
  t.equal(app.passwordAuth.stats().verifications, 1)
})
