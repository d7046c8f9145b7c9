import t from 'tap'
import { MemoryRevocationStore } from '../lib/index.js'
import { buildTestApp, decodeJwt } from './helpers/app.js'

t.test('logout answers 204 and the token stops working at once', async (t) => {
  const { token, logout, me } = await buildTestApp(t)
  const issued = await token()
  t.equal((await me(issued)).statusCode, 200)
  const response = await logout(issued)
  t.equal(response.statusCode, 204)
  t.equal(response.body, '')
  t.equal(response.headers['cache-control'], 'no-store')
  const after = await me(issued)
  t.equal(after.statusCode, 401)
  t.equal(after.json().code, 'FST_PWAUTH_TOKEN_INVALID')
})

t.test('a second logout with the same token is a 401', async (t) => {
  const { token, logout } = await buildTestApp(t)
  const issued = await token()
  t.equal((await logout(issued)).statusCode, 204)
  const again = await logout(issued)
  t.equal(again.statusCode, 401)
  t.equal(again.json().code, 'FST_PWAUTH_TOKEN_INVALID')
  t.equal(again.headers['www-authenticate'], 'Bearer realm="fastify-password-auth", error="invalid_token"')
})

t.test('logout revokes only the presented token', async (t) => {
  const { token, logout, me } = await buildTestApp(t)
  const first = await token()
  const second = await token()
  await logout(first)
  t.equal((await me(second)).statusCode, 200)
})

t.test('the revocation lasts until the token expires', async (t) => {
  const revoked: Array<[string, number]> = []
  const store = new MemoryRevocationStore()
  const { token, logout } = await buildTestApp(t, {
    auth: {
      revocations: {
        revoke: async (jti, expiresAt) => { revoked.push([jti, expiresAt]); await store.revoke(jti, expiresAt) },
        isRevoked: async (jti) => await store.isRevoked(jti)
      }
    }
  })
  const issued = await token()
  const { jti, exp } = decodeJwt(issued).payload as { jti: string, exp: number }
  await logout(issued)
  t.equal(revoked.length, 1)
  t.equal(revoked[0]![0], jti)
  t.ok(revoked[0]![1] >= exp * 1000, 'until at least the expiry')
  t.ok(revoked[0]![1] <= exp * 1000 + 5000, 'and not much longer')
})

t.test('logout ignores the body and its content type', async (t) => {
  const { app, token, me } = await buildTestApp(t)
  const bodies: Array<[string, string]> = [
    ['application/json', ''],
    ['application/json', '{not json'],
    ['text/plain', 'hello'],
    ['application/x-www-form-urlencoded', 'a=b'],
    ['application/octet-stream', '\u0000\u0001']
  ]
  for (const [type, payload] of bodies) {
    const issued = await token()
    const response = await app.inject({ method: 'POST', url: '/Auth/Logout', payload, headers: { authorization: `Bearer ${issued}`, 'content-type': type } })
    t.equal(response.statusCode, 204, `${type} ${JSON.stringify(payload)}`)
    t.equal((await me(issued)).statusCode, 401)
  }
  for (const type of ['', 'not a media type', 'application/json; charset']) {
    const issued = await token()
    const response = await app.inject({ method: 'POST', url: '/Auth/Logout', payload: 'x', headers: { authorization: `Bearer ${issued}`, 'content-type': type } })
    t.equal(response.statusCode, 204, `malformed content type ${JSON.stringify(type)}`)
  }
})

t.test('logout without a bearer token is 401 TOKEN_MISSING with a plain challenge', async (t) => {
  const { app, token } = await buildTestApp(t)
  const issued = await token()
  for (const authorization of [undefined, `Basic ${Buffer.from('ada:pw').toString('base64')}`, `Token ${issued}`, `Bearer${issued}`, '']) {
    const response = await app.inject({ method: 'POST', url: '/Auth/Logout', headers: authorization === undefined ? {} : { authorization } })
    t.equal(response.statusCode, 401, String(authorization).slice(0, 20))
    t.equal(response.json().code, 'FST_PWAUTH_TOKEN_MISSING')
    t.equal(response.headers['www-authenticate'], 'Bearer realm="fastify-password-auth"')
    t.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8')
  }
})

t.test('the Bearer scheme is case-insensitive; a bearer header without a usable token is invalid', async (t) => {
  const { app, token } = await buildTestApp(t)
  for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
    const response = await app.inject({ method: 'POST', url: '/Auth/Logout', headers: { authorization: `${scheme} ${await token()}` } })
    t.equal(response.statusCode, 204, scheme)
  }
  for (const authorization of ['Bearer', 'Bearer ', 'Bearer    ', 'Bearer a b']) {
    const response = await app.inject({ method: 'POST', url: '/Auth/Logout', headers: { authorization } })
    t.equal(response.statusCode, 401)
    t.equal(response.json().code, 'FST_PWAUTH_TOKEN_INVALID', JSON.stringify(authorization))
  }
})
