import t from 'tap'
import { activeId } from '../../example/bench/settings.js'
import { mintAccessToken } from '../../example/bench/tokens.js'
import { startServer } from '../helpers/server-process.js'
import { repoPath } from '../helpers/root.js'

// `npm run bench` is not part of the tests; this only checks that its server still boots and that the
// bench's assumptions about the plugin hold (same JSON on all three GET routes, tokens it signs itself,
// the hand-written logout revoking what /plain then refuses).
const SERVER = repoPath('dist/example/bench/server.js')
const PASSWORD = 'correct horse battery staple, benchmarked'

t.test('the bench server boots and its routes answer as the bench expects', async (t) => {
  const { url } = await startServer(t, { UV_THREADPOOL_SIZE: '3' }, SERVER)
  const post = async (path: string, body: unknown): Promise<Response> =>
    await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

  const login = await post('/Auth/Login', { email: 'user7@bench.test', password: PASSWORD })
  t.equal(login.status, 200)
  const { accessToken } = await login.json() as { accessToken: string }
  const bodies: Record<string, unknown> = {}
  for (const path of ['/me', '/plain', '/open']) {
    const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${accessToken}` } })
    t.equal(response.status, 200, path)
    bodies[path] = await response.json()
  }
  t.same(bodies['/me'], { id: activeId(7), email: 'user7@bench.test', active: true, credentialVersion: 0 })
  t.same(Object.keys(bodies['/plain']!), Object.keys(bodies['/me']!), '/plain answers the same shape')
  t.same(bodies['/open'], bodies['/plain'])
  t.equal((await fetch(`${url}/plain`)).status, 401, '/plain is guarded')

  const [session] = await (await post('/bench/sessions', { count: 1 })).json() as Array<{ sub: string, sid: string }>
  const minted = mintAccessToken(session!.sub, session!.sid)
  t.equal((await fetch(`${url}/me`, { headers: { authorization: `Bearer ${minted}` } })).status, 200, 'the plugin accepts the bench\'s own tokens')
  t.equal((await fetch(`${url}/Auth/Logout`, { method: 'POST', headers: { authorization: `Bearer ${minted}` } })).status, 204)

  const hand = await post('/hand/login', { email: 'user8@bench.test', password: PASSWORD })
  t.equal(hand.status, 200)
  const handToken = (await hand.json() as { accessToken: string }).accessToken
  t.equal((await fetch(`${url}/plain`, { headers: { authorization: `Bearer ${handToken}` } })).status, 200)
  t.equal((await post('/hand/login', { email: 'user8@bench.test', password: 'wrong' })).status, 401)
  const handLogout = async (token: string): Promise<number> =>
    (await fetch(`${url}/hand/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status
  t.equal(await handLogout(handToken), 204)
  t.equal(await handLogout(handToken), 401, 'a revoked token cannot log out twice')
  t.equal((await fetch(`${url}/plain`, { headers: { authorization: `Bearer ${handToken}` } })).status, 401, '/plain refuses a revoked token')
  t.equal(await handLogout(mintAccessToken(activeId(9), 'any-session')), 204, 'the hand-written logout takes the bench\'s own tokens')

  const { accessToken: forRefresh, refreshToken } = await (await post('/Auth/Login', { email: 'user10@bench.test', password: PASSWORD })).json() as { accessToken: string, refreshToken: string }
  t.ok(forRefresh)
  const refreshed = await post('/Auth/Refresh', { refreshToken })
  t.equal(refreshed.status, 200, 'Login hands out refresh tokens')

  t.equal((await post('/Auth/Login', { email: 'inactive3@bench.test', password: PASSWORD })).status, 401, 'inactive accounts are seeded')
  t.match(await (await fetch(`${url}/bench/stats`)).json(), { verifications: 3, shed: 0, roundTrips: { postgres: {}, redis: {} }, stores: 'accounts: memory, sessions: memory' })
})
