import t from 'tap'
import { startExampleServer } from '../../../example/bench/overload.js'
import { loginSessions } from '../../../example/bench/scenarios.js'
import { activeId, BENCH_SESSION_POLICY } from '../../../example/bench/settings.js'
import { mintAccessToken } from '../../../example/bench/tokens.js'
import { currentSessionLifetimeMs } from '../../helpers/bench-sessions.js'

// `npm run bench` is not part of the tests; this checks what its `example` section adds to the example server
// (example-preload.ts): live sessions for tokens it signs, and the bench server's hand-written Logout, whose
// tokens are the same kind and whose revocations are its own.
t.test('the example server with the bench\'s preload: its sessions and its own hand-written Logout', async (t) => {
  const example = await startExampleServer(`test-${process.pid}`, true)
  t.teardown(example.stop)
  const post = async (path: string, init: { token?: string, body?: unknown }): Promise<Response> => await fetch(`${example.url}${path}`, {
    method: 'POST',
    headers: { ...init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }, ...init.body === undefined ? {} : { 'content-type': 'application/json' } },
    body: init.body === undefined ? undefined : JSON.stringify(init.body)
  })

  t.equal((await post('/bench/sessions', { body: { count: 1 } })).status, 409, 'no session store met before the first login')
  await loginSessions(example, 1)
  const sessions = await (await post('/bench/sessions', { body: { count: 2 } })).json() as Array<{ sub: string, sid: string }>
  t.equal(sessions.length, 2)
  const [first] = sessions
  t.equal((await post('/Auth/Logout', { token: mintAccessToken(first!.sub, first!.sid) })).status, 204, 'a signed token of a created session logs out')
  // Short-lived, so the server does not carry every earlier run's ended sessions into the next (settings.ts).
  t.equal(await currentSessionLifetimeMs(example.url, mintAccessToken(sessions[1]!.sub, sessions[1]!.sid)), BENCH_SESSION_POLICY.maxMs,
    'a created session lives as long as the bench\'s policy says')

  const hand = mintAccessToken(activeId(3), 'hand-1')
  t.equal((await post('/hand/logout', { token: hand })).status, 204)
  t.equal((await post('/hand/logout', { token: hand })).status, 401, 'a revoked token cannot log out twice')
  t.equal((await post('/hand/logout', { token: `${hand.slice(0, -2)}xx` })).status, 401, 'a forged signature is refused')
  t.equal((await post('/hand/logout', {})).status, 401, 'no token, no logout')
  t.equal((await post('/Auth/Logout', { token: hand })).status, 401, 'the plugin refuses a token without a live session')
})
