import t, { type Test } from 'tap'
import { authenticate, authenticated, type AuthEvent } from '../../lib/index.js'
import { buildTestApp, decodeJwt, EMAIL, PASSWORD } from '../helpers/app.js'

const TEN_MINUTES = 600_000

async function sessionsApp (t: Test, auth = {}) {
  const events: AuthEvent[] = []
  const built = await buildTestApp(t, {
    auth: { sessionRoutes: true, onEvent: (event) => { events.push(event) }, ...auth },
    routes: (app) => {
      app.get('/whoami', { onRequest: authenticate }, async (request) => ({ session: request.session }))
      app.post('/email', authenticated({ maxAuthAge: 60 }, async (request) => ({ changed: request.account.id })))
    }
  })
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
  /** A token whose last password proof was ten minutes ago (the store's clock set back while it logs in). */
  const oldToken = async (): Promise<string> => {
    built.clock.advance(-TEN_MINUTES)
    try { return await built.token() } finally { built.clock.advance(TEN_MINUTES) }
  }
  return { ...built, events, bearer, oldToken }
}

t.test('the session routes are off unless sessionRoutes is on', async (t) => {
  const { app, token } = await buildTestApp(t)
  const headers = { authorization: `Bearer ${await token()}` }
  t.equal((await app.inject({ url: '/Auth/Sessions', headers })).statusCode, 404)
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Reauthenticate', headers, payload: { password: PASSWORD } })).statusCode, 404)
})

t.test('request.session: the token\'s session and when its account last proved the password', async (t) => {
  const { app, token, bearer } = await sessionsApp(t)
  const issued = await token()
  const { session } = (await app.inject({ url: '/whoami', headers: bearer(issued) })).json()
  t.equal(session.id, decodeJwt(issued).payload.sid)
  t.ok(Math.abs(session.authenticatedAt - Date.now()) < 5000, 'at Login')
})

t.test('GET /Sessions lists the caller\'s own live sessions, the current one marked, times in ISO 8601', async (t) => {
  const { app, token, bearer, accounts, ada } = await sessionsApp(t)
  const first = await token()
  const second = await token()
  accounts.add({ email: 'bob@example.com', passwordHash: ada.passwordHash })
  await token('bob@example.com')
  const listed = (await app.inject({ url: '/Auth/Sessions', headers: bearer(second) })).json()
  t.same(listed.map((s: { id: string }) => s.id), [decodeJwt(first).payload.sid, decodeJwt(second).payload.sid], 'only ada\'s, oldest first')
  t.same(listed.map((s: { current: boolean }) => s.current), [false, true])
  t.match(listed[0], { createdAt: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, lastUsedAt: /Z$/, expiresAt: /Z$/, ip: '127.0.0.1', userAgent: 'lightMyRequest' })
  t.equal((await app.inject({ url: '/Auth/Sessions' })).statusCode, 401, 'guarded')
})

t.test('ending sessions needs a recent password proof: 401 with an RFC 9470 challenge, then Reauthenticate, then 204', async (t) => {
  const { app, token, bearer, oldToken, events } = await sessionsApp(t)
  const other = await token()
  const stale = await oldToken()
  const otherId = decodeJwt(other).payload.sid as string
  const refused = await app.inject({ method: 'DELETE', url: `/Auth/Sessions/${otherId}`, headers: bearer(stale) })
  t.equal(refused.statusCode, 401)
  t.equal(refused.json().code, 'FST_PWAUTH_REAUTHENTICATION_REQUIRED')
  t.equal(refused.headers['www-authenticate'], 'Bearer realm="fastify-password-auth", error="insufficient_user_authentication", max_age=300')
  t.equal((await app.inject({ url: '/me', headers: bearer(other) })).statusCode, 200, 'nothing ended')

  const wrong = await app.inject({ method: 'POST', url: '/Auth/Reauthenticate', headers: bearer(stale), payload: { password: 'not the password' } })
  t.equal(wrong.statusCode, 401)
  t.equal(wrong.json().code, 'FST_PWAUTH_INVALID_CREDENTIALS')
  const right = await app.inject({ method: 'POST', url: '/Auth/Reauthenticate', headers: bearer(stale), payload: { password: PASSWORD } })
  t.equal(right.statusCode, 204)
  t.same(events.map((e) => e.type).filter((type) => type.startsWith('session.reauth')), ['session.reauthentication_failed', 'session.reauthenticated'], 'events')
  t.ok(events.some((e) => e.type === 'session.reauthentication_failed' && e.reason === 'wrong_password'))

  const ended = await app.inject({ method: 'DELETE', url: `/Auth/Sessions/${otherId}`, headers: bearer(stale) })
  t.equal(ended.statusCode, 204)
  t.equal((await app.inject({ url: '/me', headers: bearer(other) })).statusCode, 401, 'its token stops working')
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Reauthenticate', payload: { password: PASSWORD } })).statusCode, 401, 'Reauthenticate is guarded')
})

t.test('DELETE /Sessions/:id: a foreign session answers exactly like an unknown one, and is not ended', async (t) => {
  const { app, token, bearer, accounts, ada } = await sessionsApp(t)
  accounts.add({ email: 'bob@example.com', passwordHash: ada.passwordHash })
  const bob = await token('bob@example.com')
  const adaToken = await token()
  const foreign = await app.inject({ method: 'DELETE', url: `/Auth/Sessions/${decodeJwt(bob).payload.sid as string}`, headers: bearer(adaToken) })
  const unknown = await app.inject({ method: 'DELETE', url: '/Auth/Sessions/no-such-session-id', headers: bearer(adaToken) })
  t.equal(foreign.statusCode, 404)
  t.equal(foreign.body, unknown.body, 'the same bytes')
  t.equal(foreign.json().code, 'FST_PWAUTH_SESSION_NOT_FOUND')
  t.equal((await app.inject({ url: '/me', headers: bearer(bob) })).statusCode, 200, 'bob is still signed in')
})

t.test('POST /Sessions/EndOthers ends every other session of the caller and keeps the current one', async (t) => {
  const { app, token, bearer } = await sessionsApp(t)
  const others = [await token(), await token()]
  const mine = await token()
  const response = await app.inject({ method: 'POST', url: '/Auth/Sessions/EndOthers', headers: bearer(mine) })
  t.same(response.json(), { ended: 2 })
  for (const other of others) t.equal((await app.inject({ url: '/me', headers: bearer(other) })).statusCode, 401)
  t.equal((await app.inject({ url: '/me', headers: bearer(mine) })).statusCode, 200)
})

t.test('Reauthenticate shares Login\'s per-e-mail throttle', async (t) => {
  const { app, bearer, token } = await sessionsApp(t)
  const issued = await token()
  for (let i = 0; i < 5; i++) {
    t.equal((await app.inject({ method: 'POST', url: '/Auth/Reauthenticate', headers: bearer(issued), payload: { password: `wrong ${i}` } })).statusCode, 401)
  }
  const blocked = await app.inject({ method: 'POST', url: '/Auth/Reauthenticate', headers: bearer(issued), payload: { password: PASSWORD } })
  t.equal(blocked.statusCode, 429)
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })).statusCode, 429, 'and Login too')
})

t.test('authenticated({ maxAuthAge }) guards a host route the same way', async (t) => {
  const { app, bearer, oldToken, token } = await sessionsApp(t)
  const stale = await oldToken()
  const refused = await app.inject({ method: 'POST', url: '/email', headers: bearer(stale) })
  t.equal(refused.statusCode, 401)
  t.match(refused.headers['www-authenticate'], /error="insufficient_user_authentication", max_age=60$/)
  t.equal((await app.inject({ method: 'POST', url: '/email', headers: bearer(await token()) })).statusCode, 200, 'a fresh login is recent')
  t.equal((await app.inject({ method: 'POST', url: '/email' })).statusCode, 401, 'and no token is still TOKEN_MISSING')
})
