import { Type } from '@sinclair/typebox'
import swagger from '@fastify/swagger'
import { compileErrors, validate } from '@readme/openapi-parser'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import passwordAuth, { authenticate, authenticated, authenticateResponses, errors, type PasswordAuthOptions } from '../../lib/index.js'
import { authOptions, PLUGIN_TIMEOUT_MS } from '../helpers/app.js'

type Doc = Record<string, any>

/** A host app with plain @fastify/swagger (no options beyond `openapi: {}`), the plugin and two guarded routes; its document. */
async function hostDocument (t: Test, auth: Partial<PasswordAuthOptions> = {}): Promise<Doc> {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(swagger, { openapi: {} })
  await app.register(passwordAuth, { ...await authOptions(), ...auth })
  app.get('/me', authenticated(async (request) => request.account))
  app.get('/orders', { onRequest: authenticate, schema: { response: { 200: { type: 'array', items: { type: 'string' } }, ...authenticateResponses() } } }, async () => [])
  await app.ready()
  return app.swagger() as Doc
}

async function expectValid (t: Test, document: Doc): Promise<void> {
  const result = await validate(structuredClone(document) as never)
  t.ok(result.valid, result.valid ? 'a valid OpenAPI document' : compileErrors(result))
}

const codesOf = (response: Doc): string[] => response.content['application/problem+json'].schema.properties.code.enum

t.test('plain @fastify/swagger produces a valid document: every status with its codes, headers and bodies', async (t) => {
  const document = await hostDocument(t)
  await expectValid(t, document)
  const login = document.paths['/Auth/Login'].post.responses
  t.same(Object.keys(login).sort(), ['200', '400', '401', '403', '413', '415', '429', '503'])
  t.same(codesOf(login[400]), ['FST_PWAUTH_VALIDATION', 'FST_PWAUTH_MALFORMED_BODY'])
  t.same(codesOf(login[401]), ['FST_PWAUTH_INVALID_CREDENTIALS'])
  t.same(codesOf(login[429]), ['FST_PWAUTH_TOO_MANY_ATTEMPTS'])
  t.same(Object.keys(login[200].content['application/json'].schema.properties), ['accessToken', 'tokenType', 'expiresIn', 'refreshToken', 'refreshExpiresIn', 'deviceToken'])
  t.match(login[401].headers, { 'WWW-Authenticate': { description: '`Bearer realm="<realm>"`' } })
  for (const status of ['429', '503']) t.ok(login[status].headers['Retry-After'], `Retry-After on ${status}`)

  const change = document.paths['/Auth/ChangePassword'].post
  t.same(codesOf(change.responses[400]), ['FST_PWAUTH_VALIDATION', 'FST_PWAUTH_MALFORMED_BODY', 'FST_PWAUTH_PASSWORD_MISMATCH', 'FST_PWAUTH_WEAK_PASSWORD'])
  t.same(change.responses[400].content['application/problem+json'].schema.properties.reasons.items.enum,
    ['too_short', 'too_long', 'same_as_current', 'contains_email', 'common', 'rejected', 'breached'])
  t.notOk(change.responses[204].content, '204: no body')
  t.match(change.requestBody.content['application/json'].schema.properties.newPassword, { minLength: 15, maxLength: 128, description: /code points after NFC/ })

  const logout = document.paths['/Auth/Logout'].post
  t.same(codesOf(logout.responses[401]), ['FST_PWAUTH_TOKEN_MISSING', 'FST_PWAUTH_TOKEN_INVALID'])
  t.equal(logout.responses[401].headers['WWW-Authenticate'].description, '`Bearer realm="<realm>"` or `Bearer realm="<realm>", error="invalid_token"`')
  t.notOk(logout.security, 'no security requirement naming a scheme the host may not have')
  t.match(logout.description, /Authorization: Bearer <access token>/)
  t.same(codesOf(document.paths['/Auth/Refresh'].post.responses[401]), ['FST_PWAUTH_REFRESH_TOKEN_INVALID'])

  for (const [path, item] of Object.entries(document.paths as Doc)) {
    if (!path.startsWith('/Auth/')) continue
    for (const [status, response] of Object.entries(item.post.responses as Doc)) {
      t.same(response.headers['Cache-Control'].schema, { type: 'string', enum: ['no-store'] }, `${path} ${status}: Cache-Control`)
      if (status >= '400') for (const code of codesOf(response)) t.ok(Object.hasOwn(errors, code), `${path} ${status}: ${code} is an error of lib/errors.ts`)
    }
  }

  for (const path of ['/me', '/orders']) {
    const responses = document.paths[path].get.responses
    t.same(codesOf(responses[401]), ['FST_PWAUTH_TOKEN_MISSING', 'FST_PWAUTH_TOKEN_INVALID'], `${path}: the guard's 401`)
    t.same(codesOf(responses[503]), ['FST_PWAUTH_UNAVAILABLE'], `${path}: the guard's 503`)
    t.ok(responses[503].headers['Retry-After'], `${path}: Retry-After`)
  }
})

t.test('the document follows the configuration: policy lengths, refresh off, cookie mode', async (t) => {
  const policy = await hostDocument(t, { passwordPolicy: { minLength: 20, maxLength: 64 } })
  t.match(policy.paths['/Auth/ChangePassword'].post.requestBody.content['application/json'].schema.properties.newPassword, { minLength: 20, maxLength: 64 })

  const off = await hostDocument(t, { refresh: false })
  await expectValid(t, off)
  t.notOk(off.paths['/Auth/Refresh'], 'no Refresh route')
  t.same(Object.keys(off.paths['/Auth/Login'].post.responses[200].content['application/json'].schema.properties), ['accessToken', 'tokenType', 'expiresIn', 'deviceToken'])

  const cookie = await hostDocument(t, { refresh: { cookie: true } })
  await expectValid(t, cookie)
  const login = cookie.paths['/Auth/Login'].post.responses[200]
  t.same(login.content['application/json'].schema.required, ['accessToken', 'tokenType', 'expiresIn', 'refreshExpiresIn'])
  t.notOk(login.content['application/json'].schema.properties.refreshToken, 'the refresh token is not in the body')
  t.match(login.headers['Set-Cookie'].description, /__Secure-fastify-password-auth-refresh=<refresh token>; Path=\/Auth; .*HttpOnly; Secure; SameSite=Strict/)
  t.match(cookie.paths['/Auth/Refresh'].post.responses[401].headers['Set-Cookie'].description, /Max-Age=0/)
  t.match(cookie.paths['/Auth/Logout'].post.responses[204].headers['Set-Cookie'].description, /is cleared/)
})

t.test('sign-up and reset routes document their bodies, the host\'s registration fields and their errors', async (t) => {
  const document = await hostDocument(t, {
    deliver: () => {}, passwordReset: true, registration: { fields: { displayName: Type.String({ minLength: 1, maxLength: 80 }) } }
  })
  await expectValid(t, document)
  const register = document.paths['/Auth/Register'].post
  t.same(register.requestBody.content['application/json'].schema.required, ['email', 'password', 'confirmPassword', 'displayName'])
  t.match(register.requestBody.content['application/json'].schema.properties.displayName, { type: 'string', maxLength: 80 })
  t.same(Object.keys(register.responses).sort(), ['202', '400', '413', '415', '429', '503'])
  t.same(codesOf(register.responses[400]), ['FST_PWAUTH_VALIDATION', 'FST_PWAUTH_MALFORMED_BODY', 'FST_PWAUTH_PASSWORD_MISMATCH', 'FST_PWAUTH_WEAK_PASSWORD'])
  t.same(codesOf(document.paths['/Auth/VerifyEmail'].post.responses[400]), ['FST_PWAUTH_VALIDATION', 'FST_PWAUTH_MALFORMED_BODY', 'FST_PWAUTH_VERIFY_TOKEN_INVALID', 'FST_PWAUTH_WEAK_PASSWORD'])
  t.same(document.paths['/Auth/VerifyEmail'].post.requestBody.content['application/json'].schema.required, ['token', 'password'], 'VerifyEmail takes the account\'s password')
  t.same(codesOf(document.paths['/Auth/ResetPassword'].post.responses[400]),
    ['FST_PWAUTH_VALIDATION', 'FST_PWAUTH_MALFORMED_BODY', 'FST_PWAUTH_PASSWORD_MISMATCH', 'FST_PWAUTH_RESET_TOKEN_INVALID', 'FST_PWAUTH_WEAK_PASSWORD'])
  t.ok(document.paths['/Auth/ForgotPassword'].post.responses[202], '202 documented')
  t.notOk(document.paths['/Auth/ForgotPassword'].post.responses[202].content, '202: no body')
})

t.test('the README\'s transform adds a bearer requirement to Logout in a document that defines the scheme', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(swagger, {
    openapi: { components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } } },
    transform: ({ schema, url }) => ({ schema: url.endsWith('/Logout') ? { ...schema, security: [{ bearerAuth: [] }] } : schema, url })
  })
  await app.register(passwordAuth, await authOptions())
  await app.ready()
  const document = app.swagger() as Doc
  await expectValid(t, document)
  t.same(document.paths['/Auth/Logout'].post.security, [{ bearerAuth: [] }])
  t.notOk(document.paths['/Auth/Login'].post.security)
})

t.test('two factors document their bodies: Confirm, Disable and RecoveryCodes take the password, ChangePassword a code; the state, password and code errors', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  // The set-up routes name the bearer scheme: a document that defines it.
  await app.register(swagger, { openapi: { components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } } } })
  await app.register(passwordAuth, { ...await authOptions(), mfa: true })
  await app.ready()
  const document = app.swagger() as Doc
  await expectValid(t, document)
  const body = (path: string) => document.paths[path].post.requestBody.content['application/json'].schema
  for (const path of ['/Auth/Mfa/Confirm', '/Auth/Mfa/Disable', '/Auth/Mfa/RecoveryCodes']) {
    t.same(Object.keys(body(path).properties), ['code', 'password', 'deviceToken'], path)
    t.same(body(path).required, ['code'], `${path}: a missing password is Login's 401, not a 400`)
    const responses = document.paths[path].post.responses
    t.same(codesOf(responses[401]).sort(), ['FST_PWAUTH_INVALID_CREDENTIALS', 'FST_PWAUTH_MFA_CODE_INVALID', 'FST_PWAUTH_TOKEN_INVALID', 'FST_PWAUTH_TOKEN_MISSING'], `${path}: no REAUTHENTICATION_REQUIRED`)
    t.same(codesOf(responses[409]), ['FST_PWAUTH_MFA_STATE'])
  }
  t.ok(body('/Auth/ChangePassword').properties.code, 'ChangePassword takes a code')
  t.ok(codesOf(document.paths['/Auth/ChangePassword'].post.responses[401]).includes('FST_PWAUTH_MFA_CODE_INVALID'))
  t.notOk(codesOf(document.paths['/Auth/Mfa/Setup'].post.responses[401]).includes('FST_PWAUTH_REAUTHENTICATION_REQUIRED'), 'Setup needs no recent authentication')
})

t.test('passkeys document their routes, bodies and errors', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(swagger, { openapi: { components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } } } })
  await app.register(passwordAuth, { ...await authOptions(), mfa: true, sessionRoutes: true, passkeys: { rpId: 'example.com', rpName: 'Example', origins: ['https://example.com'] } })
  await app.ready()
  const document = app.swagger() as Doc
  await expectValid(t, document)
  for (const path of ['/Auth/Passkeys/RegisterOptions', '/Auth/Passkeys', '/Auth/Passkeys/LoginOptions', '/Auth/LoginPasskey', '/Auth/Passkeys/ReauthOptions', '/Auth/LoginMfa/Options']) {
    t.ok(document.paths[path]?.post, path)
  }
  t.ok(document.paths['/Auth/Passkeys'].get)
  t.ok(document.paths['/Auth/Passkeys/{id}'].delete)
  const add = document.paths['/Auth/Passkeys'].post.responses
  t.ok(codesOf(add[400]).includes('FST_PWAUTH_PASSKEY_INVALID'), 'a refused registration is a 400')
  t.notOk(add[400].headers['WWW-Authenticate'], 'with no challenge')
  t.same(codesOf(add[409]), ['FST_PWAUTH_PASSKEY_LIMIT'])
  const addBody = document.paths['/Auth/Passkeys'].post.requestBody.content['application/json'].schema
  t.ok(addBody.properties.password, 'adding a passkey takes the password')
  t.same(addBody.required, ['response'], 'a missing password is a wrong one (401), not a 400')
  t.ok(codesOf(add[401]).includes('FST_PWAUTH_INVALID_CREDENTIALS'), 'a wrong password: Login\'s 401')
  t.ok(codesOf(add[429]).includes('FST_PWAUTH_TOO_MANY_ATTEMPTS'), 'section 6\'s 429')
  t.ok(add[403] !== undefined && codesOf(add[403]).includes('FST_PWAUTH_PASSWORD_RESET_REQUIRED'))
  for (const path of ['/Auth/Passkeys/RegisterOptions', '/Auth/Passkeys']) {
    t.notOk(codesOf(document.paths[path].post.responses[401]).includes('FST_PWAUTH_REAUTHENTICATION_REQUIRED'), `${path}: the password stands for the recent authentication`)
  }
  t.same(codesOf(document.paths['/Auth/LoginPasskey'].post.responses[401]), ['FST_PWAUTH_PASSKEY_INVALID'])
  t.notOk(document.paths['/Auth/LoginPasskey'].post.description.includes('per credential'), 'failures are counted on no credential')
  t.ok(document.paths['/Auth/Reauthenticate'].post.requestBody.content['application/json'].schema.properties.passkey, 'Reauthenticate takes a passkey')
  t.ok(document.paths['/Auth/LoginMfa'].post.requestBody.content['application/json'].schema.properties.passkey, 'LoginMfa takes a passkey')
  t.same(document.paths['/Auth/LoginMfa'].post.requestBody.content['application/json'].schema.required, ['mfaToken'])
})

t.test('account self-service documents its routes, bodies and errors; Login and ChangePassword their 403', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(swagger, { openapi: { components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } } } })
  await app.register(passwordAuth, { ...await authOptions(), deliver: () => {}, passwordReset: true, account: { emailChange: true, deletion: true, export: true } })
  await app.ready()
  const document = app.swagger() as Doc
  await expectValid(t, document)
  const change = document.paths['/Auth/ChangeEmail'].post
  t.same(change.requestBody.content['application/json'].schema.required, ['newEmail'], 'a missing password is a wrong one (401), not a 400')
  t.same(Object.keys(change.requestBody.content['application/json'].schema.properties).sort(), ['deviceToken', 'newEmail', 'password'])
  t.ok(change.responses[202], '202 documented')
  t.notOk(change.responses[202].content, '202: no body')
  const deletion = document.paths['/Auth/DeleteAccount'].post
  t.same(Object.keys(deletion.requestBody.content['application/json'].schema.properties).sort(), ['deviceToken', 'password'], 'DeleteAccount takes the password')
  for (const [name, route] of [['ChangeEmail', change], ['DeleteAccount', deletion]] as const) {
    t.notOk(codesOf(route.responses[401]).includes('FST_PWAUTH_REAUTHENTICATION_REQUIRED'), `${name}: the password stands for a recent authentication`)
    for (const code of ['FST_PWAUTH_MFA_REQUIRED', 'FST_PWAUTH_INVALID_CREDENTIALS']) t.ok(codesOf(route.responses[401]).includes(code), `${name}: ${code}`)
    t.same(codesOf(route.responses[403]), ['FST_PWAUTH_PASSWORD_RESET_REQUIRED'], `${name}: a breached or marked password`)
    t.ok(codesOf(route.responses[429]).includes('FST_PWAUTH_TOO_MANY_ATTEMPTS'), `${name}: §6's counters`)
  }
  t.same(codesOf(document.paths['/Auth/VerifyEmailChange'].post.responses[400]), ['FST_PWAUTH_VALIDATION', 'FST_PWAUTH_MALFORMED_BODY', 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID'])
  const revert = document.paths['/Auth/RevertEmailChange'].post
  t.same(revert.requestBody.content['application/json'].schema.required, ['token', 'newPassword', 'confirmNewPassword'])
  t.ok(codesOf(revert.responses[400]).includes('FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID'))
  t.same(codesOf(document.paths['/Auth/DeleteAccount'].post.responses[409]), ['FST_PWAUTH_DELETE_REFUSED'])
  const exported = document.paths['/Auth/Account/Export'].get.responses[200].content['application/json'].schema
  t.same(Object.keys(exported.properties).sort(), ['account', 'host', 'mfa', 'passkeys', 'sessions'])
  for (const path of ['/Auth/Login', '/Auth/ChangePassword']) t.same(codesOf(document.paths[path].post.responses[403]), ['FST_PWAUTH_PASSWORD_RESET_REQUIRED'], path)
})

t.test('security notices and trusted devices are documented: the sessions list\'s device, rememberDevice, the devices routes', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(swagger, { openapi: { components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } } } })
  await app.register(passwordAuth, { ...await authOptions(), mfa: { trustDays: 30 }, sessionRoutes: true })
  await app.ready()
  const document = app.swagger() as Doc
  await expectValid(t, document)
  const session = document.paths['/Auth/Sessions'].get.responses[200].content['application/json'].schema.items
  t.match(session.properties, { device: { properties: { browser: { type: 'string' }, os: { type: 'string' }, type: { type: 'string' } } }, trustedDevice: { type: 'boolean' }, ip: { description: /trustProxy/ } })
  const loginMfa = document.paths['/Auth/LoginMfa'].post
  t.match(loginMfa.requestBody.content['application/json'].schema.properties.rememberDevice, { type: 'boolean' })
  t.match(loginMfa.description, /trusted for 30 days/)
  const devices = document.paths['/Auth/Sessions/Devices'].get.responses[200].content['application/json'].schema.items
  t.same(Object.keys(devices.properties), ['id', 'label', 'trustedUntil', 'lastUsedAt'])
  const remove = document.paths['/Auth/Sessions/Devices/{id}'].delete.responses
  t.same(codesOf(remove[404]), ['FST_PWAUTH_SESSION_NOT_FOUND'])
  t.ok(codesOf(remove[401]).includes('FST_PWAUTH_REAUTHENTICATION_REQUIRED'), 'ending a trust needs a recent authentication')
})

t.test('no description holds a bare <placeholder> that Markdown would read as HTML (Swagger showed realm="")', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(swagger, { openapi: { components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } } } })
  await app.register(passwordAuth, { ...await authOptions(), mfa: { trustDays: 30 }, sessionRoutes: true, passwordReset: true, registration: true, deliver: () => {}, account: { emailChange: true, deletion: true, export: true } })
  await app.ready()
  const document = app.swagger()
  const bare: string[] = []
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) { value.forEach(walk); return }
    if (typeof value !== 'object' || value === null) return
    for (const [key, inner] of Object.entries(value)) {
      if ((key === 'description' || key === 'summary') && typeof inner === 'string' && /<[a-z][^>]*>/i.test(inner.replace(/`[^`]*`/g, ''))) bare.push(inner)
      walk(inner)
    }
  }
  walk(document)
  t.same(bare, [])
})

t.test('with a range service (contract §20): 403 PASSWORD_RESET_REQUIRED on Login, ChangePassword, Reauthenticate, Confirm and Disable; 503 where new passwords are checked', async (t) => {
  const documentOf = async (auth: Partial<PasswordAuthOptions>): Promise<Doc> => {
    const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
    t.teardown(async () => { await app.close() })
    // Reauthenticate names the bearer scheme: a document that defines it.
    await app.register(swagger, { openapi: { components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } } } })
    await app.register(passwordAuth, { ...await authOptions(), sessionRoutes: true, ...auth })
    await app.ready()
    return app.swagger() as Doc
  }
  const plain = await documentOf({ mfa: true })
  const document = await documentOf({ mfa: true, breachedPasswords: { rangeUrl: 'https://api.pwnedpasswords.com/range/' } })
  await expectValid(t, document)
  for (const path of ['/Auth/Login', '/Auth/ChangePassword', '/Auth/Reauthenticate', '/Auth/Mfa/Confirm', '/Auth/Mfa/Disable', '/Auth/Mfa/RecoveryCodes']) {
    t.same(codesOf(plain.paths[path].post.responses[403]), ['FST_PWAUTH_PASSWORD_RESET_REQUIRED'], `${path}: the 403 of an admin's mark, without a range service too`)
    const forbidden = document.paths[path].post.responses[403]
    t.same(codesOf(forbidden), ['FST_PWAUTH_PASSWORD_RESET_REQUIRED'], path)
    t.match(forbidden.description, /Password reset required/)
    t.same(codesOf(document.paths[path].post.responses[503]), ['FST_PWAUTH_UNAVAILABLE'])
  }
})
