import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { BenchPasskey } from '../../../example/bench/passkey-authenticator.js'
import { activeId, BENCH_SESSION_POLICY } from '../../../example/bench/settings.js'
import { mintAccessToken } from '../../../example/bench/tokens.js'
import { currentSessionLifetimeMs } from '../../helpers/bench-sessions.js'
import { startServer } from '../../helpers/server-process.js'
import { repoPath } from '../../helpers/root.js'

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
  t.equal(await currentSessionLifetimeMs(url, minted), BENCH_SESSION_POLICY.maxMs, 'a created session lives as long as the bench\'s policy says')
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

t.test('the bench server signs its passkeys in and answers ChangeEmail as the passkey and enumeration sections expect', async (t) => {
  const { url } = await startServer(t, { UV_THREADPOOL_SIZE: '3' }, SERVER)
  const post = async (path: string, body: unknown, token?: string): Promise<Response> => await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...token === undefined ? {} : { authorization: `Bearer ${token}` } },
    body: JSON.stringify(body)
  })
  const { accessToken } = await (await post('/Auth/Login', { email: 'user11@bench.test', password: PASSWORD })).json() as { accessToken: string }
  const passkey = new BenchPasskey()
  const options = await (await post('/Auth/Passkeys/RegisterOptions', {}, accessToken)).json() as { challenge: string, user: { id: string } }
  t.equal((await post('/Auth/Passkeys', { ...passkey.create(options), password: PASSWORD }, accessToken)).status, 201, 'enrolled through the routes')

  // The section's LoginOptions carry no body and no content-type.
  const challenge = async (): Promise<string> => (await (await fetch(`${url}/Auth/Passkeys/LoginOptions`, { method: 'POST' })).json() as { challenge: string }).challenge
  const signIn = await post('/Auth/LoginPasskey', passkey.get(await challenge()))
  t.equal(signIn.status, 200, 'a signed assertion signs in')
  const { refreshToken } = await signIn.json() as { refreshToken: string }
  t.equal((await post('/Auth/Refresh', { refreshToken })).status, 200, 'and its session refreshes')
  t.equal((await post('/Auth/LoginPasskey', passkey.get(await challenge()))).status, 200, 'the next one, its counter one more, too')
  const first = await challenge()
  const early = passkey.get(first)
  t.equal((await post('/Auth/LoginPasskey', passkey.get(await challenge()))).status, 200)
  t.equal((await post('/Auth/LoginPasskey', early)).status, 401, 'an assertion sent after a later one (a lower counter) is refused: the section must send in signing order')

  const answers = []
  for (const newEmail of ['free@bench.test', 'free@bench.test', 'user12@bench.test', 'user11@bench.test']) {
    const response = await post('/Auth/ChangeEmail', { newEmail, password: PASSWORD }, accessToken)
    answers.push({ status: response.status, body: await response.text() })
  }
  t.same(answers, Array(4).fill({ status: 202, body: '' }), 'ChangeEmail is on: one 202 with no body for a free, pending, taken and own address')
})

t.test('the bench server puts every store in SQLite with BENCH_SQL, as the sql section runs it, and removes its file at close', async (t) => {
  const label = `fpa_bench_test_${process.pid}`
  const file = join(tmpdir(), `${label}.db`)
  const server = await startServer(t, { UV_THREADPOOL_SIZE: '3', BENCH_SQL: 'sqlite', BENCH_SQL_LABEL: label }, SERVER)
  const login = await fetch(`${server.url}/Auth/Login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'user11@bench.test', password: PASSWORD }) })
  t.equal(login.status, 200)
  const { accessToken, refreshToken } = await login.json() as { accessToken: string, refreshToken: string }
  t.equal((await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${accessToken}` } })).status, 200)
  const refreshed = await fetch(`${server.url}/Auth/Refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) })
  t.equal(refreshed.status, 200)
  t.match(await (await fetch(`${server.url}/bench/stats`)).json(), { stores: 'every store in SQLite (one file, WAL)' })
  t.ok(existsSync(file), 'the database file is there while the server runs')
  await server.stop()
  t.notOk(existsSync(file), 'and gone once it closed')
})
