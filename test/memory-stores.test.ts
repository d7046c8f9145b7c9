import t from 'tap'
import { MemoryAccountStore, MemoryAttemptStore, MemoryMfaStore, MemoryOneTimeTokenStore, MemoryPasskeyStore, MemorySessionStore } from '../lib/index.js'
import {
  accountStoreContract, attemptStoreContract, CONTRACT_SESSION_POLICY, CONTRACT_THROTTLE_POLICY, mfaStoreContract, oneTimeTokenStoreContract, passkeyStoreContract,
  sessionStoreContract
} from '../lib/testing/index.js'
import { ADA_FIELDS } from './helpers/account-fields.js'
import { testClock } from './helpers/app.js'

t.test('memory stores keep the store contract', async (t) => {
  const checks = [
    ...accountStoreContract({
      create: async () => {
        const store = new MemoryAccountStore()
        return {
          store,
          add: async (account) => store.add(account),
          fields: ADA_FIELDS,
          setActive: async (id, active) => store.setActive(id, active)
        }
      }
    }),
    ...sessionStoreContract({ create: async () => new MemorySessionStore() }),
    ...attemptStoreContract({ create: async () => new MemoryAttemptStore() }),
    ...oneTimeTokenStoreContract({ create: async () => new MemoryOneTimeTokenStore() }),
    ...mfaStoreContract({ create: async () => new MemoryMfaStore() }),
    ...passkeyStoreContract({ create: async () => new MemoryPasskeyStore() })
  ]
  for (const check of checks) await t.test(check.name, check.run)
})

/** Runs `fn` with Date.now() moved `ms` into the future. */
async function later<T> (ms: number, fn: () => Promise<T>): Promise<T> {
  const realNow = Date.now
  Date.now = () => realNow() + ms
  try { return await fn() } finally { Date.now = realNow }
}

t.test('the memory session store sweeps sessions past their limits, ended ones included', async (t) => {
  const clock = testClock()
  const store = new MemorySessionStore({ now: clock.now })
  const session = (id: string) => ({ id, accountId: 'a', credentialVersion: 0, keyId: 'k', ip: '', userAgent: '' })
  for (let i = 0; i < 100; i++) await store.create(session(`old-${i}`), CONTRACT_SESSION_POLICY)
  await store.end('old-0', 'logout')
  await store.create(session('long'), { ...CONTRACT_SESSION_POLICY, idleMs: 3_600_000, maxMs: 3_600_000 })
  t.equal(store.size, 101)
  clock.advance(120_000)
  await store.create(session('new'), CONTRACT_SESSION_POLICY)
  t.equal(store.size, 2, 'only the live sessions remain')
  t.same((await store.list('a')).map((s) => s.id), ['long', 'new'])
  await t.rejects(store.create(session('new'), CONTRACT_SESSION_POLICY), /already exists/)
})

t.test('the memory attempt store sweeps forgotten keys and stays under maxKeys', async (t) => {
  const store = new MemoryAttemptStore({ maxKeys: 50 })
  const policy = CONTRACT_THROTTLE_POLICY
  for (let i = 0; i < 120; i++) {
    if ((await store.reserve(`key-${i}`, 't', policy)).granted) await store.settle(`key-${i}`, 't', 'failure', policy)
  }
  t.equal(store.size, 50, 'bounded by maxKeys')
  t.equal((await store.reserve('key-119', 't', policy)).granted, true, 'the newest keys are kept')
  await later(3_600_000, async () => { await store.reserve('fresh', 't', policy) })
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
  const seed = { email: 'seed@example.com', password: 'plain text', passwordHash: 'h' }
  t.throws(() => store.add(seed), { name: 'TypeError', message: 'MemoryAccountStore.add: give passwordHash (see hashPassword()), not password' })
  t.equal(store.setActive('no-such-id', false), false)
  t.ok(Object.isFrozen(await store.findById(ada.id)), 'records cannot be changed in place')
  t.ok(Object.isFrozen(await store.findByEmail(ada.email)))
})

t.test('the memory account store hands out one frozen view per record, without the hash', async (t) => {
  const store = new MemoryAccountStore()
  const ada = store.add({ email: 'ada@example.com', passwordHash: 'h', displayName: 'Ada' })
  const view = await store.findById(ada.id)
  t.same(view, { id: ada.id, email: 'ada@example.com', active: true, credentialVersion: 0, displayName: 'Ada' })
  t.notOk(view !== null && 'passwordHash' in view)
  t.equal(await store.findById(ada.id), view, 'the same object every time: nothing is copied per request')
  store.setActive(ada.id, true)
  t.equal((await store.findById(ada.id))?.credentialVersion, 0, 'activating an active account ends nothing')
  store.setActive(ada.id, false)
  store.setActive(ada.id, false)
  t.equal((await store.findById(ada.id))?.credentialVersion, 1, 'deactivation advances the version once')
  t.not(await store.findById(ada.id), view, 'an update replaces the view')
})

t.test('the memory one-time token store holds at most maxTokens, dropping the oldest', async (t) => {
  const store = new MemoryOneTimeTokenStore({ maxTokens: 3 })
  const token = { purpose: 'verify_email', accountId: '', email: 'a@example.com', credentialVersion: 0 }
  for (const slot of ['a', 'b', 'c']) await store.put(slot, `hash-${slot}`, token, 60_000)
  await store.put('a', 'hash-a2', token, 60_000) // a again: now the newest
  await store.put('d', 'hash-d', token, 60_000)
  t.equal(store.size, 3)
  t.equal(await store.find('b', 'hash-b', 'verify_email'), null, 'the oldest went')
  for (const [slot, hash] of [['a', 'hash-a2'], ['c', 'hash-c'], ['d', 'hash-d']]) t.ok(await store.find(slot!, hash!, 'verify_email'), slot)
})
