import t from 'tap'
import { RedisSessionStore } from '../../../lib/stores/redis/index.js'
import { deleteKeys, redisClient, redisUnavailable } from '../../helpers/services.js'
import { buildTestApp, decodeJwt } from '../../helpers/app.js'
import { expectProblem } from '../../helpers/problem.js'

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

t.test('logout ends the whole session: its other access tokens and its refresh token die at once', async (t) => {
  const { tokens, refresh, logout, me } = await buildTestApp(t)
  const first = await tokens()
  const refreshed = (await refresh(first.refreshToken)).json()
  const other = await tokens()
  t.equal((await me(first.accessToken)).statusCode, 200, 'an older access token of the session still works before logout')
  t.equal((await logout(refreshed.accessToken)).statusCode, 204)
  t.equal((await me(first.accessToken)).statusCode, 401, 'the other access token of the session')
  t.equal((await me(refreshed.accessToken)).statusCode, 401, 'the presented one')
  const refused = await refresh(refreshed.refreshToken)
  t.equal(refused.statusCode, 401, 'the refresh token')
  t.equal(refused.json().code, 'FST_PWAUTH_REFRESH_TOKEN_INVALID')
  t.equal((await me(other.accessToken)).statusCode, 200, 'another session of the account is untouched')
  t.equal((await refresh(other.refreshToken)).statusCode, 200)
})

t.test('of concurrent logouts with one token exactly one ends the session', async (t) => {
  const events: string[] = []
  const { token, logout } = await buildTestApp(t, { auth: { onEvent: (event) => { events.push(event.type) } } })
  const issued = await token()
  const statuses = (await Promise.all(Array.from({ length: 50 }, async () => await logout(issued)))).map((r) => r.statusCode)
  t.same(statuses.filter((s) => s === 204).length, 1, 'one 204')
  t.same(statuses.filter((s) => s === 401).length, 49, 'the rest 401')
  t.same(events.filter((e) => e === 'logout'), ['logout'], 'one logout, one event')
})

t.test('logout reports the session and the token it ended', async (t) => {
  const events: Array<Record<string, unknown>> = []
  const { token, logout } = await buildTestApp(t, { auth: { onEvent: (event) => { events.push(event) } } })
  const issued = await token()
  await logout(issued)
  const { sub, sid, jti } = decodeJwt(issued).payload
  t.match(events.find((e) => e.type === 'logout'), { accountId: sub, sessionId: sid, tokenId: jti })
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
    expectProblem(t, response, 401, 'FST_PWAUTH_TOKEN_MISSING', String(authorization).slice(0, 20))
    t.equal(response.headers['www-authenticate'], 'Bearer realm="fastify-password-auth"')
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

t.test('of 50 concurrent logouts with one token on Redis sessions, exactly one ends the session', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  const prefix = `test:${process.pid}:${Date.now().toString(36)}:logout-race:`
  t.teardown(async () => { await deleteKeys(client, prefix) })
  const events: string[] = []
  const { token, logout } = await buildTestApp(t, {
    auth: { sessions: new RedisSessionStore({ client, prefix }), onEvent: (event) => { events.push(event.type) } }
  })
  const issued = await token()
  const statuses = (await Promise.all(Array.from({ length: 50 }, async () => await logout(issued)))).map((r) => r.statusCode)
  t.equal(statuses.filter((s) => s === 204).length, 1, 'one 204')
  t.equal(statuses.filter((s) => s === 401).length, 49, 'the rest 401')
  t.same(events.filter((e) => e === 'logout'), ['logout'], 'one logout, one event')
})
