import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { SLOW_MS, slowFormat, slowRowAttack } from '../helpers/slow-rows.js'

// Issue 18.1: slow legacy rows an attacker can address by e-mail fill the hashing queue; a guess that
// waited longer than its reservation's lease no longer counted as in flight, so later bursts at the
// victim got more guesses than the throttle allows. Now a verification that cannot start within half the
// lease is shed with 503 (and counts neither way), so every verified guess was counted.

t.test('slow rows filling the hashing queue cannot outrun the per-e-mail throttle: at most 5 of the victim\'s guesses are verified', async (t) => {
  await slowRowAttack(t)
})

t.test('a login that waits behind slow rows is answered within its lease: 503, not an unbounded wait', async (t) => {
  const { app, accounts, login } = await buildTestApp(t, { auth: { legacyHashes: [slowFormat], storeTimeout: 100, hashing: { threads: 1, maxQueue: 1000 } } })
  for (let i = 0; i < 10; i++) accounts.add({ email: `slow${i}@example.com`, passwordHash: `slow$${i}` })
  const flood = Array.from({ length: 10 }, async (_, i) => await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: `slow${i}@example.com`, password: 'x' } }))
  await new Promise((resolve) => setTimeout(resolve, 20))
  const started = performance.now()
  const owner = await login()
  const waited = performance.now() - started
  t.equal(owner.statusCode, 503)
  t.equal(owner.headers['retry-after'], '1')
  t.ok(waited < 10 * SLOW_MS, `answered after ${waited.toFixed(0)} ms, not after the whole queue`)
  await Promise.all(flood)
  t.equal((await login()).statusCode, 200, 'and logs in once the queue drains')
})
