import t, { type Test } from 'tap'
import { MemoryAccountStore, type AuthEvent } from '../../lib/index.js'
import { buildTestApp, changeBody, decodeJwt, EMAIL, type TestApp } from '../helpers/app.js'

const DAY = 86_400_000

function expectRefreshRefused (t: Test, response: { statusCode: number, headers: Record<string, unknown>, json: () => any }, name: string): void {
  t.equal(response.statusCode, 401, `${name}: 401`)
  t.same(response.json(), {
    type: 'urn:fastify-password-auth:problem:refresh-token-invalid',
    title: 'Invalid refresh token',
    status: 401,
    detail: 'The refresh token is invalid, expired or no longer in use. Log in again.',
    code: 'FST_PWAUTH_REFRESH_TOKEN_INVALID'
  }, `${name}: one body for every reason`)
  t.equal(response.headers['www-authenticate'], 'Bearer realm="fastify-password-auth", error="invalid_token"', `${name}: challenge`)
  t.equal(response.headers['cache-control'], 'no-store', `${name}: no-store`)
}

async function withEvents (t: Test, options: Parameters<typeof buildTestApp>[1] = {}): Promise<TestApp & { events: AuthEvent[] }> {
  const events: AuthEvent[] = []
  const test = await buildTestApp(t, { ...options, auth: { onEvent: (event) => { events.push(event) }, ...options.auth } })
  return { ...test, events }
}

function failures (events: AuthEvent[]): string[] {
  return events.flatMap((event) => event.type === 'session.refresh_failed' ? [event.reason] : [])
}

t.test('a refresh token buys a new access token of the same session and the next refresh token', async (t) => {
  const { tokens, refresh, me } = await buildTestApp(t)
  const login = await tokens()
  const response = await refresh(login.refreshToken)
  t.equal(response.statusCode, 200)
  t.equal(response.headers['cache-control'], 'no-store')
  const body = response.json()
  t.same(Object.keys(body).sort(), ['accessToken', 'expiresIn', 'refreshExpiresIn', 'refreshToken', 'tokenType'])
  t.equal(body.expiresIn, 900)
  t.equal(body.refreshExpiresIn, 604_800, 'the idle limit starts again')
  t.not(body.refreshToken, login.refreshToken)
  const before = decodeJwt(login.accessToken).payload
  const after = decodeJwt(body.accessToken).payload
  t.equal(after.sid, before.sid, 'same session')
  t.equal(after.sub, before.sub)
  t.not(after.jti, before.jti, 'new token id')
  t.equal((await me(body.accessToken)).statusCode, 200)
  t.equal((await me(login.accessToken)).statusCode, 200, 'the earlier access token lives until it expires')
  t.equal((await refresh(body.refreshToken)).statusCode, 200, 'the next refresh token works once')
})

t.test('a refresh token sent again within the grace period gets the same next refresh token, without a second rotation', async (t) => {
  const { tokens, refresh, clock, me } = await buildTestApp(t)
  const login = await tokens()
  const first = (await refresh(login.refreshToken)).json()
  clock.advance(9_000)
  const again = await refresh(login.refreshToken)
  t.equal(again.statusCode, 200)
  const second = again.json()
  t.equal(second.refreshToken, first.refreshToken, 'the very token the first refresh returned')
  t.not(second.accessToken, first.accessToken, 'a fresh access token')
  t.equal((await me(second.accessToken)).statusCode, 200)
  const concurrent = await Promise.all(Array.from({ length: 10 }, async () => await refresh(first.refreshToken)))
  t.same(concurrent.map((r) => r.statusCode), Array(10).fill(200), 'ten tabs refreshing at once')
  t.equal(new Set(concurrent.map((r) => r.json().refreshToken)).size, 1, 'all converge on one refresh token')
  t.equal((await refresh(concurrent[0]!.json().refreshToken)).statusCode, 200, 'and it works')
})

t.test('a replaced refresh token after the grace period ends the whole session (reuse detection)', async (t) => {
  const { tokens, refresh, clock, me, events } = await withEvents(t)
  const login = await tokens()
  const rotated = (await refresh(login.refreshToken)).json()
  clock.advance(10_001)
  expectRefreshRefused(t, await refresh(login.refreshToken), 'reused')
  expectRefreshRefused(t, await refresh(rotated.refreshToken), 'the current refresh token of the session')
  t.equal((await me(rotated.accessToken)).statusCode, 401, 'its access tokens are rejected at the next request')
  t.equal((await me(login.accessToken)).statusCode, 401)
  t.same(failures(events), ['reused', 'ended'])
  const { sub, sid } = decodeJwt(login.accessToken).payload
  t.match(events.find((e) => e.type === 'session.reuse_detected'), { accountId: sub, sessionId: sid })
  t.match(events.find((e) => e.type === 'session.ended'), { accountId: sub, sessionId: sid, reason: 'refresh_token_reused' })
})

t.test('a refresh token two rotations old ends the session, even within the grace period', async (t) => {
  const { tokens, refresh, me } = await buildTestApp(t)
  const login = await tokens()
  const one = (await refresh(login.refreshToken)).json()
  const two = (await refresh(one.refreshToken)).json()
  expectRefreshRefused(t, await refresh(login.refreshToken), 'two rotations back')
  expectRefreshRefused(t, await refresh(two.refreshToken), 'the session is over')
  t.equal((await me(two.accessToken)).statusCode, 401)
})

t.test('a session unused for the idle timeout ends; each refresh restarts the count', async (t) => {
  const { tokens, refresh, clock, events } = await withEvents(t)
  const kept = await tokens()
  const idle = await tokens()
  clock.advance(6 * DAY)
  const renewed = (await refresh(kept.refreshToken)).json()
  t.equal(renewed.refreshExpiresIn, 604_800)
  clock.advance(DAY + 1000)
  expectRefreshRefused(t, await refresh(idle.refreshToken), 'idle for 7 days')
  t.same(failures(events), ['idle'])
  t.equal((await refresh(renewed.refreshToken)).statusCode, 200, 'refreshed 1 day ago')
})

t.test('a session ends at its absolute lifetime however often it is refreshed', async (t) => {
  const { tokens, refresh, clock, events } = await withEvents(t)
  let current = await tokens()
  for (let day = 6; day <= 24; day += 6) {
    clock.advance(6 * DAY)
    current = (await refresh(current.refreshToken)).json()
  }
  // Real milliseconds pass besides the test clock's days: a whole second may be gone.
  t.ok([6 * 86_400 - 1, 6 * 86_400].includes(current.refreshExpiresIn), `after 24 days, the absolute limit is nearer than the idle one (${current.refreshExpiresIn})`)
  clock.advance(6 * DAY - 60_000)
  current = (await refresh(current.refreshToken)).json()
  t.ok([59, 60].includes(current.refreshExpiresIn), `${current.refreshExpiresIn}`)
  t.ok(current.expiresIn <= 60 && current.expiresIn >= 59, `no access token outlives its session (${current.expiresIn})`)
  clock.advance(60_001)
  expectRefreshRefused(t, await refresh(current.refreshToken), 'after 30 days')
  t.same(failures(events), ['expired'])
})

t.test('one 401 for every refresh token that is not accepted', async (t) => {
  const { tokens, refresh, logout, events } = await withEvents(t)
  const login = await tokens()
  const [session, generation, created, mac] = login.refreshToken.split('.')
  const forged = [
    'not-a-refresh-token',
    `${session}.${generation}.${created}.${mac!.slice(0, -1)}${mac!.endsWith('A') ? 'B' : 'A'}`,
    `${session}.${generation}.${created}.${mac!.slice(0, -1)}${String.fromCharCode(mac!.charCodeAt(42) ^ 1)}`,
    `${session}.${generation}.${created}.${mac!.slice(0, 10)}${mac![10] === 'x' ? 'y' : 'x'}${mac!.slice(11)}`,
    `${session}.${Number(generation) + 1}.${created}.${mac}`,
    `${'A'.repeat(22)}.${generation}.${created}.${mac}`,
    `${login.refreshToken}.`,
    ` ${login.refreshToken}`
  ]
  for (const token of forged) expectRefreshRefused(t, await refresh(token), JSON.stringify(token).slice(0, 40))
  t.same(failures(events), Array(forged.length).fill('invalid'))
  await logout(login.accessToken)
  expectRefreshRefused(t, await refresh(login.refreshToken), 'logged out')
  t.equal(failures(events).at(-1), 'ended')
})

t.test('Refresh takes the input rules of the other JSON routes', async (t) => {
  const { app } = await buildTestApp(t)
  const post = async (payload: string, type = 'application/json') =>
    await app.inject({ method: 'POST', url: '/Auth/Refresh', payload, headers: { 'content-type': type } })
  t.equal((await post('{}')).json().code, 'FST_PWAUTH_VALIDATION')
  t.same((await post('{}')).json().errors, [{ pointer: '/refreshToken', detail: 'is required' }])
  t.equal((await post('{"refreshToken":123}')).json().code, 'FST_PWAUTH_VALIDATION', 'no coercion')
  t.equal((await post(JSON.stringify({ refreshToken: 'x'.repeat(1025) }))).json().code, 'FST_PWAUTH_VALIDATION')
  t.equal((await post('{"refreshToken":')).json().code, 'FST_PWAUTH_MALFORMED_BODY')
  t.equal((await post('refreshToken=x', 'application/x-www-form-urlencoded')).statusCode, 415)
  t.equal((await post(JSON.stringify({ refreshToken: 'x'.repeat(20_000) }))).statusCode, 413)
})

t.test('Refresh ignores the Authorization header, runs no argon2 and counts toward no login limit', async (t) => {
  const { app, tokens, refresh } = await buildTestApp(t, { auth: { rateLimit: { max: 2 }, throttle: { freeFailures: 1 } } })
  let current = await tokens()
  const hashing = app.passwordAuth.stats()
  for (let i = 0; i < 8; i++) {
    const response = await app.inject({
      method: 'POST',
      url: '/Auth/Refresh',
      payload: { refreshToken: current.refreshToken },
      headers: { authorization: 'Bearer expired.or.garbage' }
    })
    t.equal(response.statusCode, 200, `refresh ${i + 1}`)
    current = response.json()
  }
  t.same(app.passwordAuth.stats(), hashing, 'no argon2 work')
  expectRefreshRefused(t, await refresh('garbage'), 'a failed refresh')
  t.type((await tokens()).accessToken, 'string', 'the per-IP limit (2) still lets the second login through')
})

t.test('a password change ends every session of the account', async (t) => {
  const { tokens, refresh, changePassword, me, events, app, ada } = await withEvents(t)
  const first = await tokens()
  const second = await tokens()
  t.equal((await changePassword(changeBody())).statusCode, 204)
  expectRefreshRefused(t, await refresh(first.refreshToken), 'first session')
  expectRefreshRefused(t, await refresh(second.refreshToken), 'second session')
  t.equal((await me(second.accessToken)).statusCode, 401)
  t.same(await app.passwordAuth.sessions.list(ada.id), [])
  t.same(events.filter((e) => e.type === 'session.ended').map((e) => 'reason' in e && e.reason), ['password_changed', 'password_changed'])
})

t.test('an account that is deactivated, or whose password changed elsewhere, cannot refresh', async (t) => {
  const { tokens, refresh, accounts, ada, events, me } = await withEvents(t)
  const login = await tokens()
  accounts.setActive(ada.id, false)
  expectRefreshRefused(t, await refresh(login.refreshToken), 'inactive')
  accounts.setActive(ada.id, true)
  expectRefreshRefused(t, await refresh(login.refreshToken), 'reactivated: the session stays ended')
  t.equal((await me(login.accessToken)).statusCode, 401)
  t.same(failures(events), ['account_inactive', 'ended'])

  const other = await tokens()
  await accounts.updatePasswordHash({ id: ada.id, expectedHash: ada.passwordHash, newHash: ada.passwordHash, advanceCredentialVersion: true })
  expectRefreshRefused(t, await refresh(other.refreshToken), 'credentials changed in the store')
  t.equal(failures(events).at(-1), 'credentials_changed')
})

t.test('a deleted account cannot refresh', async (t) => {
  const events: AuthEvent[] = []
  let deleted = false
  const accounts = new MemoryAccountStore()
  const store = {
    findByEmail: accounts.findByEmail.bind(accounts),
    findById: async (id: string) => deleted ? null : await accounts.findById(id),
    updatePasswordHash: accounts.updatePasswordHash.bind(accounts)
  }
  const test = await buildTestApp(t, { auth: { accounts: store, onEvent: (event) => { events.push(event) } } })
  accounts.add({ ...test.ada })
  const login = await test.tokens()
  deleted = true
  expectRefreshRefused(t, await test.refresh(login.refreshToken), 'deleted')
  t.same(failures(events), ['account_deleted'])
})

t.test('events report every session step, never a token', async (t) => {
  const lines: string[] = []
  const { tokens, refresh, clock, events, logout } = await withEvents(t, {
    fastify: { logger: { level: 'info', stream: { write: (line: string) => { lines.push(line) } } } }
  })
  const login = await tokens()
  const rotated = (await refresh(login.refreshToken)).json()
  const grace = (await refresh(login.refreshToken)).json()
  const other = await tokens()
  await logout(other.accessToken)
  clock.advance(11_000)
  await refresh(login.refreshToken)
  const sessionEvents = events.filter((e) => e.type.startsWith('session.')).map((e) => [e.type, 'grace' in e ? e.grace : 'reason' in e ? e.reason : undefined])
  t.same(sessionEvents, [
    ['session.started', undefined],
    ['session.refreshed', false],
    ['session.refreshed', true],
    ['session.started', undefined],
    ['session.reuse_detected', undefined],
    ['session.ended', 'refresh_token_reused'],
    ['session.refresh_failed', 'reused']
  ])
  const logged = lines.map((line) => JSON.parse(line))
  t.equal(logged.find((entry) => entry.authEvent?.type === 'session.reuse_detected').level, 40, 'reuse is a warning')
  const everything = JSON.stringify(events) + lines.join('\n')
  for (const token of [login, rotated, grace, other].flatMap((body) => [body.accessToken, body.refreshToken])) {
    t.notOk(everything.includes(token), 'no token')
    t.notOk(everything.includes(token.split('.').at(-1)!), 'no signature or MAC')
  }
  t.ok(events.some((e) => 'sessionId' in e && e.sessionId === decodeJwt(login.accessToken).payload.sid), 'session ids are reported')
})

t.test('with refresh off, Login answers an access token only and there is no Refresh route', async (t) => {
  const { login, app, token, logout, me } = await buildTestApp(t, { auth: { refresh: false, jwt: { secret: 'a-test-secret-of-at-least-32-bytes-long', expiresIn: 120 } } })
  const body = (await login()).json()
  t.same(Object.keys(body).sort(), ['accessToken', 'deviceToken', 'expiresIn', 'tokenType'])
  t.equal(body.expiresIn, 120)
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: { refreshToken: 'x' } })).statusCode, 404)
  const issued = await token()
  t.equal((await logout(issued)).statusCode, 204)
  t.equal((await me(issued)).statusCode, 401)
  t.equal((await me(body.accessToken)).statusCode, 200, 'a session is one access token')
})

t.test('the account e-mail never appears in a refresh token', async (t) => {
  const { tokens } = await buildTestApp(t)
  const { refreshToken } = await tokens()
  t.notOk(refreshToken.toLowerCase().includes(EMAIL))
  t.match(refreshToken, /^[\w-]{22}\.[0-9a-z]+\.[0-9a-z]+\.[\w-]{43}$/)
})

t.test('lifetimes of a few seconds work: a 1-second idle limit and a 3-second absolute one', async (t) => {
  const { login, refresh, clock } = await buildTestApp(t, { auth: { refresh: { idleTimeout: 1, maxLifetime: 3 } } })
  const idle = (await login()).json()
  clock.advance(1100)
  t.equal((await refresh(idle.refreshToken)).statusCode, 401, 'unused for over a second: ended')
  let token = (await login()).json().refreshToken
  for (let i = 0; i < 4; i++) {
    clock.advance(700)
    const next = await refresh(token)
    t.equal(next.statusCode, 200, `refreshed at ${(i + 1) * 700} ms`)
    token = next.json().refreshToken
  }
  clock.advance(700)
  t.equal((await refresh(token)).statusCode, 401, 'past the absolute lifetime, however often refreshed')
})
