import fastifyCookie from '@fastify/cookie'
import Fastify from 'fastify'
import t from 'tap'
import passwordAuth, { MemoryAccountStore } from '../../lib/index.js'
import { buildTestApp, PLUGIN_TIMEOUT_MS, SECRET } from '../helpers/app.js'
import { forgeJwt, validClaims } from '../helpers/jwt.js'
import { secretKeyId } from '../../lib/tokens/keys.js'

const COOKIE = '__Secure-fastify-password-auth-refresh'

/** The Set-Cookie header of our cookie, as attributes. */
function refreshCookie (headers: Record<string, unknown>): Record<string, string | true> | undefined {
  const all = ([] as unknown[]).concat(headers['set-cookie'] ?? []) as string[]
  const line = all.find((value) => value.startsWith(`${COOKIE}=`))
  if (line === undefined) return undefined
  const [pair, ...attributes] = line.split(/;\s*/)
  return Object.fromEntries([['value', pair!.slice(COOKIE.length + 1)], ...attributes.map((a) => {
    const [name, value] = a.split('=')
    return [name!.toLowerCase(), value ?? true]
  })])
}

t.test('cookie mode: Login and Refresh put the refresh token in an HttpOnly, Secure, SameSite=Strict cookie of the route prefix', async (t) => {
  const { login, app, me } = await buildTestApp(t, { auth: { refresh: { cookie: true } } })
  const response = await login()
  t.equal(response.statusCode, 200)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['accessToken', 'expiresIn', 'refreshExpiresIn', 'tokenType'], 'no refresh token in the body')
  const cookie = refreshCookie(response.headers)!
  t.match(cookie, { value: /^[\w-]{22}\.0\.[0-9a-z]+\.[\w-]{43}$/, httponly: true, secure: true, samesite: 'Strict', path: '/Auth', 'max-age': String(body.refreshExpiresIn) })

  const refresh = async (cookieValue?: string, payload: unknown = {}) => await app.inject({
    method: 'POST',
    url: '/Auth/Refresh',
    payload: payload as object,
    headers: cookieValue === undefined ? {} : { cookie: `${COOKIE}=${cookieValue}` }
  })
  const refreshed = await refresh(cookie.value as string)
  t.equal(refreshed.statusCode, 200, 'a body of {} is fine')
  t.notOk('refreshToken' in refreshed.json())
  const next = refreshCookie(refreshed.headers)!
  t.match(next.value, /\.1\./, 'the next generation')
  t.equal((await me(refreshed.json().accessToken)).statusCode, 200)

  const missing = await refresh()
  t.equal(missing.statusCode, 401, 'no cookie')
  t.equal(missing.json().code, 'FST_PWAUTH_REFRESH_TOKEN_INVALID')
  const inBody = await refresh(undefined, { refreshToken: next.value })
  t.equal(inBody.statusCode, 401, 'a token in the body is not read in cookie mode')
  t.match(refreshCookie(inBody.headers), { value: '', 'max-age': '0' }, 'a refused refresh clears the cookie')

  const form = await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${COOKIE}=${next.value as string}` } })
  t.equal(form.statusCode, 415, 'a cross-site form post cannot refresh: JSON is still required')
  t.equal((await refresh(next.value as string)).statusCode, 200, 'and did not use the token up')
})

t.test('cookie mode: Logout clears the cookie', async (t) => {
  const { login, logout } = await buildTestApp(t, { auth: { refresh: { cookie: { name: COOKIE } } } })
  const { accessToken } = (await login()).json()
  const response = await logout(accessToken)
  t.equal(response.statusCode, 204)
  t.match(refreshCookie(response.headers), { value: '', 'max-age': '0', path: '/Auth', httponly: true })
})

t.test('cookie mode beside a host\'s own @fastify/cookie, and a cookie path of / without a prefix', async (t) => {
  const { app } = await buildTestApp(t, {
    before: async (app) => { await app.register(fastifyCookie, { secret: 'host-cookie-secret' }) },
    auth: { refresh: { cookie: true }, prefix: '' },
    routes: (app) => { app.get('/host-cookie', async (_request, reply) => { reply.setCookie('host', 'value'); return 'ok' }) }
  })
  const response = await app.inject({ method: 'POST', url: '/Login', payload: { email: 'ada@example.com', password: 'correct horse battery staple' } })
  t.equal(response.statusCode, 200)
  t.match(refreshCookie(response.headers), { path: '/', httponly: true })
  t.match((await app.inject({ url: '/host-cookie' })).headers['set-cookie'], /^host=value/, 'the host\'s cookies are its own')
})

t.test('cookie names are checked', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await t.rejects(async () => {
    await app.register(passwordAuth, { accounts: new MemoryAccountStore(), jwt: { secret: SECRET }, refresh: { cookie: { name: 'a b;' } } })
  }, { code: 'FST_PWAUTH_INVALID_OPTION', message: /refresh\.cookie\.name must be a cookie name/ })
})

t.test('cookie mode under a host prefix: the cookie path is the routes\' full prefix, so the browser sends it to Refresh', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  const accounts = new MemoryAccountStore()
  const { hashPassword } = await import('../../lib/index.js')
  accounts.add({ email: 'ada@example.com', passwordHash: await hashPassword('correct horse battery staple', { memoryCost: 1024, timeCost: 1, parallelism: 1 }) })
  await app.register(async (api) => {
    await api.register(passwordAuth, { accounts, jwt: { secret: SECRET }, rateLimit: false, refresh: { cookie: true }, argon2: { memoryCost: 1024, timeCost: 1, parallelism: 1 } })
  }, { prefix: '/api' })
  await app.ready()
  const login = await app.inject({ method: 'POST', url: '/api/Auth/Login', payload: { email: 'ada@example.com', password: 'correct horse battery staple' } })
  const cookie = refreshCookie(login.headers)!
  t.equal(cookie.path, '/api/Auth')
  const refreshed = await app.inject({ method: 'POST', url: '/api/Auth/Refresh', payload: {}, headers: { cookie: `${COOKIE}=${cookie.value as string}` } })
  t.equal(refreshed.statusCode, 200)
  t.equal(refreshCookie(refreshed.headers)!.path, '/api/Auth')
})

t.test('cookie tossing and cross-site requests: refused without clearing, the real cookie keeps working', async (t) => {
  const { login, app } = await buildTestApp(t, { auth: { refresh: { cookie: { origins: ['https://app.example.com'] } } } })
  const real = refreshCookie((await login()).headers)!.value as string
  const other = refreshCookie((await login()).headers)!.value as string
  const refresh = async (headers: Record<string, string>) => await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: {}, headers })

  // A cookie planted with a more specific path comes first: neither is used, neither cleared.
  for (const cookie of [`${COOKIE}=${other}; ${COOKIE}=${real}`, `${COOKIE}=garbage; ${COOKIE}=${real}`]) {
    const tossed = await refresh({ cookie })
    t.equal(tossed.statusCode, 401)
    t.equal(refreshCookie(tossed.headers), undefined, 'no clearing Set-Cookie that would delete the real cookie')
  }
  for (const headers of [
    { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }, { origin: 'https://evil.example' }, { origin: 'not an origin' },
    { 'sec-fetch-site': 'same-site', origin: 'https://other.example.com' }
  ] as Array<Record<string, string>>) {
    const crossSite = await refresh({ ...headers, cookie: `${COOKIE}=${real}` })
    t.equal(crossSite.statusCode, 401, `refused with ${JSON.stringify(headers)}`)
    t.equal(refreshCookie(crossSite.headers), undefined)
  }
  const sameSite = await refresh({ 'sec-fetch-site': 'same-site', origin: 'https://app.example.com', cookie: `${COOKIE}=${real}` })
  t.equal(sameSite.statusCode, 200, 'another origin the host listed (with CORS) still refreshes, with the untouched real token')
  const own = await refresh({ origin: 'https://localhost:80', cookie: `${COOKIE}=${sameSite.headers['set-cookie']!.toString().split(';')[0]!.split('=')[1]!}` })
  t.equal(own.statusCode, 200, 'and a page of the request\'s own host')
})

t.test('a cookie-mode Login, LoginMfa or Refresh sets each cookie once (RFC 6265 §4.1.1)', async (t) => {
  const { login, app } = await buildTestApp(t, { auth: { refresh: { cookie: true } } })
  const names = (headers: Record<string, unknown>) => ([] as string[]).concat(headers['set-cookie'] as string[] ?? []).map((line) => line.split('=')[0]).sort()
  const response = await login()
  t.same(names(response.headers), [COOKIE.replace(/-refresh$/, '-device'), COOKIE])
  const value = refreshCookie(response.headers)!.value as string
  const refreshed = await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: {}, headers: { cookie: `${COOKIE}=${value}` } })
  t.same(names(refreshed.headers), [COOKIE])
})

t.test('refresh.cookie.origins takes exact origins only', async (t) => {
  for (const origins of [['https://app.example.com/'], ['app.example.com'], 'https://app.example.com', [42]]) {
    await t.rejects(async () => { await buildTestApp(t, { auth: { refresh: { cookie: { origins } as never } } }) }, { message: /refresh\.cookie\.origins must be an array of origins/ })
  }
})

t.test('cookie mode: Logout without a usable access token ends the refresh cookie\'s session; every 401 clears the cookie', async (t) => {
  const { login, app, me, ada } = await buildTestApp(t, { auth: { refresh: { cookie: true } } })
  const logout = async (headers: Record<string, string>) => await app.inject({ method: 'POST', url: '/Auth/Logout', headers })
  const now = Math.floor(Date.now() / 1000)

  const first = await login()
  const value = refreshCookie(first.headers)!.value as string
  const { accessToken } = first.json()
  for (const bearer of ['none', 'expired', 'garbage']) {
    const other = refreshCookie((await login()).headers)!.value as string
    const expired = forgeJwt({ alg: 'HS256', typ: 'at+jwt', kid: secretKeyId(SECRET) }, validClaims(ada.id, other.split('.')[0]!, { iat: now - 1000, exp: now - 60 }), SECRET)
    const headers: Record<string, string> = { cookie: `${COOKIE}=${other}` }
    if (bearer !== 'none') headers.authorization = `Bearer ${bearer === 'expired' ? expired : 'garbage'}`
    t.equal((await me(expired)).statusCode, 401, 'the expired token is refused by the guard')
    t.equal((await me(forgeJwt({ alg: 'HS256', typ: 'at+jwt', kid: secretKeyId(SECRET) }, validClaims(ada.id, other.split('.')[0]!), SECRET))).statusCode, 200, 'which it takes once not expired')
    const out = await logout(headers)
    t.equal(out.statusCode, 204, `logged out by the cookie with a ${bearer} bearer token`)
    t.match(refreshCookie(out.headers), { value: '', 'max-age': '0' }, 'and the cookie is cleared')
    const again = await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: {}, headers: { cookie: `${COOKIE}=${other}` } })
    t.equal(again.statusCode, 401, 'the session is over')
  }
  t.equal((await me(accessToken)).statusCode, 200, 'the other sessions are untouched')
  const refused = await logout({ authorization: 'Bearer not-a-token', cookie: `${COOKIE}=not-a-refresh-token` })
  t.equal(refused.statusCode, 401)
  t.match(refreshCookie(refused.headers), { value: '', 'max-age': '0' }, 'a 401 clears the cookie too')
  const none = await logout({})
  t.equal(none.statusCode, 401)
  t.match(refreshCookie(none.headers), { value: '', 'max-age': '0' })
  const tossed = await logout({ cookie: `${COOKIE}=${value}; ${COOKIE}=garbage` })
  t.equal(tossed.statusCode, 401, 'several cookies: none is used')
  t.equal(refreshCookie(tossed.headers), undefined, 'and none cleared')
  t.equal((await me(accessToken)).statusCode, 200, 'still')
})

t.test('a __Host- cookie name gets Path=/, as browsers require', async (t) => {
  const { login } = await buildTestApp(t, { auth: { refresh: { cookie: { name: '__Host-refresh' } } } })
  const line = ([] as string[]).concat((await login()).headers['set-cookie'] as string[]).find((value) => value.startsWith('__Host-refresh='))
  t.match(line, /; Path=\/;/)
})
