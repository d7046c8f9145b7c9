import fastifyCookie from '@fastify/cookie'
import Fastify from 'fastify'
import t from 'tap'
import passwordAuth, { MemoryAccountStore } from '../lib/index.js'
import { createRefreshCookie } from '../lib/session/refresh-cookie.js'
import { buildTestApp, SECRET } from './helpers/app.js'

const COOKIE = 'fastify-password-auth-refresh'

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

t.test('cookie mode takes a host\'s own @fastify/cookie, and a cookie path of / without a prefix', async (t) => {
  const { app } = await buildTestApp(t, {
    before: async (app) => { await app.register(fastifyCookie, { secret: 'host-cookie-secret' }) },
    auth: { refresh: { cookie: true }, prefix: '' }
  })
  const response = await app.inject({ method: 'POST', url: '/Login', payload: { email: 'ada@example.com', password: 'correct horse battery staple' } })
  t.equal(response.statusCode, 200)
  t.match(refreshCookie(response.headers), { path: '/', httponly: true })
})

t.test('cookie mode needs @fastify/cookie, and says so', async (t) => {
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  const missing = async (): Promise<never> => { throw Object.assign(new Error("Cannot find package '@fastify/cookie'"), { code: 'ERR_MODULE_NOT_FOUND' }) }
  await t.rejects(createRefreshCookie(app, COOKIE, '/Auth', missing),
    { code: 'FST_PWAUTH_INVALID_OPTION', message: 'fastify-password-auth: refresh.cookie needs @fastify/cookie: npm install @fastify/cookie' })
})

t.test('cookie names are checked', async (t) => {
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  await t.rejects(async () => {
    await app.register(passwordAuth, { accounts: new MemoryAccountStore(), jwt: { secret: SECRET }, refresh: { cookie: { name: 'a b;' } } })
  }, { code: 'FST_PWAUTH_INVALID_OPTION', message: /refresh\.cookie\.name must be a cookie name/ })
})
