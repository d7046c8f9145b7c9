import t from 'tap'
import { mintAccessToken } from '../example/bench/tokens.js'
import { startServer } from './helpers/server-process.js'

// `npm run bench` is not part of the tests; this only checks that its server still boots and that the
// bench's assumptions about the plugin hold (same JSON on all three GET routes, tokens it signs itself).
const SERVER = new URL('../dist/example/bench/server.js', import.meta.url).pathname
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
  t.same(bodies['/me'], { id: 'u7', email: 'user7@bench.test', active: true, credentialVersion: 0 })
  t.same(Object.keys(bodies['/plain']!), Object.keys(bodies['/me']!), '/plain answers the same shape')
  t.same(bodies['/open'], bodies['/plain'])
  t.equal((await fetch(`${url}/plain`)).status, 401, '/plain is guarded')

  const minted = mintAccessToken('u9')
  t.equal((await fetch(`${url}/me`, { headers: { authorization: `Bearer ${minted}` } })).status, 200, 'the plugin accepts the bench\'s own tokens')
  t.equal((await fetch(`${url}/Auth/Logout`, { method: 'POST', headers: { authorization: `Bearer ${minted}` } })).status, 204)

  const hand = await post('/hand/login', { email: 'user8@bench.test', password: PASSWORD })
  t.equal(hand.status, 200)
  const handToken = (await hand.json() as { accessToken: string }).accessToken
  t.equal((await fetch(`${url}/plain`, { headers: { authorization: `Bearer ${handToken}` } })).status, 200)
  t.equal((await post('/hand/login', { email: 'user8@bench.test', password: 'wrong' })).status, 401)

  t.equal((await post('/Auth/Login', { email: 'inactive3@bench.test', password: PASSWORD })).status, 401, 'inactive accounts are seeded')
  t.match(await (await fetch(`${url}/bench/stats`)).json(), { verifications: 2, shed: 0 })
})
