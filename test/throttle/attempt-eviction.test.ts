import t from 'tap'
import { MemoryAttemptStore, type ThrottlePolicy } from '../../lib/index.js'
import { buildTestApp, EMAIL } from '../helpers/app.js'

const POLICY: ThrottlePolicy = { freeFailures: 3, blockMs: 10_000, maxBlockMs: 60_000, leaseMs: 10_000, forgetAfterMs: 60_000 }

/** Records `times` failures for a key, as settled attempts whose reservation is gone. */
async function fail (store: MemoryAttemptStore, key: string, times = 1, policy = POLICY): Promise<void> {
  for (let i = 0; i < times; i++) await store.settle(key, `t${i}`, 'failure', policy)
}

async function granted (store: MemoryAttemptStore, key: string, ticket: string, policy = POLICY): Promise<boolean> {
  return (await store.reserve(key, ticket, policy)).granted
}

t.test('a spray of 100,500 new e-mails (one failure each) evicts neither a blocked key nor one with more failures', async (t) => {
  const policy = { ...POLICY, freeFailures: 5, blockMs: 600_000, maxBlockMs: 600_000 }
  const store = new MemoryAttemptStore()
  await fail(store, 'victim', 5, policy)
  await fail(store, 'almost', 4, policy)
  const started = Date.now()
  for (let i = 0; i < 100_500; i++) {
    const key = `spray-${i}`
    if (await granted(store, key, 't', policy)) await store.settle(key, 't', 'failure', policy)
  }
  const took = Date.now() - started
  // A scan per insert would make this quadratic (about 10^10 steps): minutes, not the second or two it takes, even loaded.
  t.ok(took < 60_000, `201,000 operations at the key bound took ${took} ms (no scan per insert)`)
  t.equal(store.size, 100_000, 'bounded by maxKeys')
  const victim = await store.reserve('victim', 'v', policy)
  t.equal(victim.granted, false, 'the blocked key is still blocked')
  t.ok(!victim.granted && victim.retryAfterMs > 600_000 - took - 5000, 'for the rest of its block')
  t.ok(await granted(store, 'almost', 'a1', policy), 'the key with four failures has one attempt left')
  t.notOk(await granted(store, 'almost', 'a2', policy), 'and only one: its count survived')
})

t.test('eviction order: fewest failures first, then the block that ends first', async (t) => {
  const store = new MemoryAttemptStore({ maxKeys: 3 })
  await fail(store, 'blocked', 3)
  await fail(store, 'two', 2)
  for (let i = 0; i < 10; i++) await fail(store, `spray-${i}`)
  t.equal(store.size, 3)
  t.notOk(await granted(store, 'blocked', 'b'), 'the blocked key stays')
  t.ok(await granted(store, 'two', 'x'), 'the key with two failures stays: one slot left')
  t.notOk(await granted(store, 'two', 'y'), 'only one')

  const full = new MemoryAttemptStore({ maxKeys: 2 })
  await fail(full, 'long', 4) // blocked 20 s, recorded first
  await fail(full, 'short', 3) // blocked 10 s
  await fail(full, 'newcomer')
  const long = await full.reserve('long', 'l', POLICY)
  t.ok(!long.granted && long.retryAfterMs > 15_000, 'with every key blocked, the longer block stays although older')
  t.ok(await granted(full, 'short', 's'), 'and the block that ends first went')
})

t.test('a key with nothing left to count goes before one with a failure', async (t) => {
  const store = new MemoryAttemptStore({ maxKeys: 2 })
  await fail(store, 'one')
  t.ok(await granted(store, 'in-flight', 'f'))
  await fail(store, 'newcomer')
  for (const ticket of ['a', 'b']) t.ok(await granted(store, 'one', ticket), `slot ${ticket} of the two left to "one"`)
  t.notOk(await granted(store, 'one', 'c'), '"one" kept its failure')
})

t.test('through the plugin: unknown e-mails sprayed past maxKeys do not unblock a victim', async (t) => {
  const attempts = new MemoryAttemptStore({ maxKeys: 20 })
  const { login } = await buildTestApp(t, { auth: { attempts } })
  for (let i = 0; i < 5; i++) t.equal((await login(EMAIL, 'wrong password')).statusCode, 401)
  t.equal((await login()).statusCode, 429, 'the victim is blocked')
  for (let i = 0; i < 100; i++) {
    const { statusCode } = await login(`spray${i}@example.com`, 'wrong password')
    if (statusCode !== 401) t.fail(`spray ${i}: ${statusCode}`)
  }
  t.equal(attempts.size, 20)
  t.equal((await login()).statusCode, 429, 'the victim is still blocked, even with the right password')
})
