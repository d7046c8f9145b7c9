import t from 'tap'
import { authenticate, type AuthEvent } from '../../lib/index.js'
import { buildTestApp, decodeJwt } from '../helpers/app.js'

t.test('the host lists an account\'s live sessions with their times, address and user agent', async (t) => {
  const { app, ada, clock } = await buildTestApp(t)
  const login = async (userAgent: string) => (await app.inject({
    method: 'POST',
    url: '/Auth/Login',
    payload: { email: 'ada@example.com', password: 'correct horse battery staple' },
    headers: { 'user-agent': userAgent },
    remoteAddress: '198.51.100.23'
  })).json()
  const first = await login('Firefox/140 on a laptop')
  clock.advance(60_000)
  const second = await login(`Bad\u0000Agent\n${'x'.repeat(400)}`)
  const sessions = await app.passwordAuth.sessions.list(ada.id)
  t.same(sessions.map((s) => s.id), [decodeJwt(first.accessToken).payload.sid, decodeJwt(second.accessToken).payload.sid], 'oldest first')
  const [one, two] = sessions
  t.match(one, { accountId: ada.id, ip: '198.51.100.23', userAgent: 'Firefox/140 on a laptop' })
  t.equal(two!.userAgent.length, 256, 'user agents are cut to 256 characters')
  t.notMatch(two!.userAgent, /\p{Cc}/u, 'without control characters')
  const near = (ms: number, expected: number) => ms >= expected && ms < expected + 1000
  t.ok(near(two!.createdAt - one!.createdAt, 60_000), 'created a minute apart')
  t.equal(one!.expiresAt - one!.createdAt, 7 * 86_400_000, 'ends after the idle limit unless refreshed')
  t.equal(one!.lastUsedAt, one!.createdAt)
  clock.advance(60_000)
  await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: { refreshToken: first.refreshToken } })
  const [refreshed] = await app.passwordAuth.sessions.list(ada.id)
  t.ok(near(refreshed!.lastUsedAt - refreshed!.createdAt, 120_000), 'a refresh is a use')
  t.same(await app.passwordAuth.sessions.list('no-such-account'), [])
})

t.test('the host ends one session: its tokens die at the next request, the others live on', async (t) => {
  const events: AuthEvent[] = []
  const { app, tokens, me, refresh, ada } = await buildTestApp(t, { auth: { onEvent: (event) => { events.push(event) } } })
  const doomed = await tokens()
  const kept = await tokens()
  const sid = decodeJwt(doomed.accessToken).payload.sid as string
  t.equal(await app.passwordAuth.sessions.end(sid), true)
  t.equal(await app.passwordAuth.sessions.end(sid), false, 'already ended')
  t.equal((await me(doomed.accessToken)).statusCode, 401)
  t.equal((await refresh(doomed.refreshToken)).statusCode, 401)
  t.equal((await me(kept.accessToken)).statusCode, 200)
  t.match(events.filter((e) => e.type === 'session.ended'), [{ accountId: ada.id, sessionId: sid, reason: 'ended_by_host', requestId: undefined, ip: undefined }])
})

t.test('"log out everywhere" as a route of the host, in a few lines', async (t) => {
  const events: AuthEvent[] = []
  const { app, tokens, me, refresh } = await buildTestApp(t, {
    auth: { onEvent: (event) => { events.push(event) } },
    routes: (app) => {
      app.post('/sessions/logout-everywhere', { onRequest: authenticate }, async (request, reply) => {
        const ended = await app.passwordAuth.sessions.endAll(request.account!.id, { request })
        return await reply.send({ ended })
      })
    }
  })
  const sessions = [await tokens(), await tokens(), await tokens()]
  const response = await app.inject({ method: 'POST', url: '/sessions/logout-everywhere', headers: { authorization: `Bearer ${sessions[0]!.accessToken}` } })
  t.same(response.json(), { ended: 3 })
  for (const session of sessions) {
    t.equal((await me(session.accessToken)).statusCode, 401)
    t.equal((await refresh(session.refreshToken)).statusCode, 401)
  }
  const ended = events.filter((e) => e.type === 'session.ended')
  t.equal(ended.length, 3)
  t.ok(ended.every((e) => e.requestId === response.headers['request-id'] || typeof e.requestId === 'string'), 'attributed to the request')
  t.ok(ended.every((e) => e.ip === '127.0.0.1'))
})

t.test('the host API fails closed: a store failure rejects with the 503 error', async (t) => {
  const { app, sessions } = await buildTestApp(t)
  sessions.list = async () => { throw new Error('store down') }
  await t.rejects(app.passwordAuth.sessions.list('x'), { code: 'FST_PWAUTH_UNAVAILABLE', statusCode: 503 })
})

t.test('the host starts a session for an account it authenticated another way: Login\'s answer, the cookie in cookie mode', async (t) => {
  for (const cookie of [false, true]) {
    const { app, ada, accounts, me } = await buildTestApp(t, {
      auth: { refresh: { cookie } },
      routes: (app) => {
        app.post('/invitations/accept', async (request, reply) => {
          const { accountId } = request.body as { accountId: string }
          return await app.passwordAuth.sessions.start(accountId, { request, reply }) ?? await reply.code(404).send()
        })
      }
    })
    const accepted = await app.inject({ method: 'POST', url: '/invitations/accept', payload: { accountId: ada.id } })
    t.equal(accepted.statusCode, 200)
    const body = accepted.json()
    t.equal(body.tokenType, 'Bearer')
    t.equal((await me(body.accessToken)).json().email, 'ada@example.com', `cookie ${String(cookie)}: the access token works`)
    if (cookie) {
      t.notOk('refreshToken' in body, 'cookie mode: not in the body')
      t.match(accepted.headers['set-cookie'], /^__Secure-fastify-password-auth-refresh=[^;]+; Max-Age=\d+; Path=\/Auth; HttpOnly; Secure; SameSite=Strict$/)
    } else {
      const refreshed = await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: { refreshToken: body.refreshToken } })
      t.equal(refreshed.statusCode, 200, 'and its refresh token too')
    }
    t.equal((await app.inject({ method: 'POST', url: '/invitations/accept', payload: { accountId: 'nobody' } })).statusCode, 404, 'an unknown account: null')
    accounts.setActive(ada.id, false)
    t.equal((await app.inject({ method: 'POST', url: '/invitations/accept', payload: { accountId: ada.id } })).statusCode, 404, 'an inactive one too')
  }
})

t.test('sessions.end with accountId ends only a session of that account', async (t) => {
  const { app, ada, accounts, token, me } = await buildTestApp(t)
  const bob = accounts.add({ email: 'bob@example.com', passwordHash: ada.passwordHash })
  const adaToken = await token()
  const sid = decodeJwt(adaToken).payload.sid as string
  t.equal(await app.passwordAuth.sessions.end(sid, { accountId: bob.id }), false, 'bob cannot end ada\'s session')
  t.equal((await me(adaToken)).statusCode, 200)
  t.equal(await app.passwordAuth.sessions.end('no-such-session', { accountId: ada.id }), false)
  t.equal(await app.passwordAuth.sessions.end(sid, { accountId: ada.id }), true)
  t.equal((await me(adaToken)).statusCode, 401)
})
