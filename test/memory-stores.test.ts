import t from 'tap'
import { MemoryAccountStore, MemoryAttemptStore, MemoryRevocationStore } from '../lib/index.js'
import { accountStoreContract, attemptStoreContract, CONTRACT_THROTTLE_POLICY, revocationStoreContract } from '../lib/testing/index.js'

t.test('memory stores keep the store contract', async (t) => {
  const checks = [
    ...accountStoreContract({
      create: async () => {
        const store = new MemoryAccountStore()
        return { store, add: async (account) => store.add(account) }
      }
    }),
    ...revocationStoreContract({ create: async () => new MemoryRevocationStore() }),
    ...attemptStoreContract({ create: async () => new MemoryAttemptStore() })
  ]
  for (const check of checks) await t.test(check.name, check.run)
})

/** Runs `fn` with Date.now() moved `ms` into the future. */
async function later<T> (ms: number, fn: () => Promise<T>): Promise<T> {
  const realNow = Date.now
  Date.now = () => realNow() + ms
  try { return await fn() } finally { Date.now = realNow }
}

t.test('the memory revocation store sweeps expired entries', async (t) => {
  const store = new MemoryRevocationStore()
  for (let i = 0; i < 100; i++) await store.revoke(`old-${i}`, Date.now() + 1000)
  await store.revoke('long', Date.now() + 3_600_000)
  t.equal(store.size, 101)
  await later(120_000, async () => { await store.revoke('new', Date.now() + 1000) })
  t.equal(store.size, 2, 'only the live revocations remain')
  t.equal(await store.isRevoked('long'), true)
})

t.test('the memory attempt store sweeps forgotten keys and stays under maxKeys', async (t) => {
  const store = new MemoryAttemptStore({ maxKeys: 50 })
  const policy = CONTRACT_THROTTLE_POLICY
  for (let i = 0; i < 120; i++) {
    const reservation = await store.reserve(`key-${i}`, policy)
    if (reservation.granted) await store.settle(`key-${i}`, reservation.ticket, 'failure', policy)
  }
  t.equal(store.size, 50, 'bounded by maxKeys')
  t.equal((await store.reserve('key-119', policy)).granted, true, 'the newest keys are kept')
  await later(3_600_000, async () => { await store.reserve('fresh', policy) })
  t.equal(store.size, 1, 'forgotten keys are swept')
})

t.test('the memory account store refuses duplicates and normalises e-mails', async (t) => {
  const store = new MemoryAccountStore()
  const ada = store.add({ email: '  Ada@Example.COM ', passwordHash: 'h' })
  t.equal(ada.email, 'ada@example.com')
  t.equal(ada.credentialVersion, 0)
  t.equal(ada.active, true)
  t.throws(() => store.add({ email: 'ada@example.com', passwordHash: 'h' }), /already exists/)
  t.throws(() => store.add({ email: 'other@example.com', passwordHash: 'h', id: ada.id }), /already exists/)
  t.equal(store.setActive('no-such-id', false), false)
  t.ok(Object.isFrozen(await store.findById(ada.id)), 'records cannot be changed in place')
})
