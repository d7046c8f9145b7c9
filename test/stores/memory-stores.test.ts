import t from 'tap'
import { MemoryAccountStore, MemoryAttemptStore, MemoryMfaStore, MemoryOneTimeTokenStore, MemoryPasskeyStore, MemorySessionStore } from '../../lib/index.js'
import {
  accountStoreContract, attemptStoreContract, CONTRACT_SESSION_POLICY, CONTRACT_THROTTLE_POLICY, mfaStoreContract, oneTimeTokenStoreContract, passkeyStoreContract,
  sessionStoreContract
} from '../../lib/stores/testing/index.js'
import { ADA_FIELDS } from '../helpers/account-fields.js'
import { testClock } from '../helpers/app.js'

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
    // Bounded below the contract's flood of sign-in challenges, so it reaches the bounds.
    ...oneTimeTokenStoreContract({ create: async () => new MemoryOneTimeTokenStore({ maxTokens: 20, maxOpenTokens: 100 }), flood: 1000 }),
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

const OPEN = { purpose: 'passkey_login', accountId: '', email: '', credentialVersion: 0 }
const LINK = { purpose: 'password_reset', accountId: 'account-1', email: 'ada@example.com', credentialVersion: 0 }

t.test('the memory one-time token store: 100,500 sign-in challenges (what anyone can ask for) push out no link and no mfaToken', async (t) => {
  const store = new MemoryOneTimeTokenStore()
  await store.put('reset', 'hash-reset', LINK, 60_000)
  await store.put('mfa', 'hash-mfa', { ...LINK, purpose: 'mfa_login' }, 60_000)
  await store.put('revert', 'hash-revert', { ...LINK, purpose: 'email_revert', fields: { oldEmail: 'old@example.com' } }, 60_000)
  for (let i = 0; i < 100_500; i++) await store.put(`challenge-${i}`, `hash-${i}`, OPEN, 60_000)
  t.ok(await store.find('reset', 'hash-reset', 'password_reset'), 'the reset link')
  t.ok(await store.find('mfa', 'hash-mfa', 'mfa_login'), 'the mfaToken')
  t.ok(await store.find('revert', 'hash-revert', 'email_revert'), 'the revert link')
  t.equal(store.size, 100_003, 'the challenges are bounded on their own: 100,000 of them')
  t.equal(await store.find('challenge-499', 'hash-499', 'passkey_login'), null, 'the oldest challenges went')
  t.ok(await store.find('challenge-100499', 'hash-100499', 'passkey_login'), 'the newest stayed')
})

t.test('the memory one-time token store holds at most maxOpenTokens tokens of no account, dropping the oldest of them', async (t) => {
  const store = new MemoryOneTimeTokenStore({ maxOpenTokens: 3 })
  const pending = { purpose: 'verify_email', accountId: '', email: 'a@example.com', credentialVersion: 0 }
  for (const slot of ['a', 'b', 'c']) await store.put(slot, `hash-${slot}`, pending, 60_000)
  await store.put('a', 'hash-a2', pending, 60_000) // a again: now the newest
  await store.put('d', 'hash-d', pending, 60_000)
  t.equal(store.size, 3)
  t.equal(await store.find('b', 'hash-b', 'verify_email'), null, 'the oldest went')
  for (const [slot, hash] of [['a', 'hash-a2'], ['c', 'hash-c'], ['d', 'hash-d']]) t.ok(await store.find(slot!, hash!, 'verify_email'), slot)
})

t.test('the memory one-time token store holds at most maxTokens tokens of accounts: past it a put fails (503), and no live one is dropped', async (t) => {
  const store = new MemoryOneTimeTokenStore({ maxTokens: 2 })
  await store.put('reset', 'hash-reset', LINK, 60_000)
  await store.put('mfa', 'hash-mfa', { ...LINK, purpose: 'mfa_login' }, 1000)
  await t.rejects(store.put('another', 'hash-another', { ...LINK, accountId: 'account-2' }, 60_000),
    { message: 'MemoryOneTimeTokenStore is full: 2 tokens of accounts are live (maxTokens)' })
  t.ok(await store.find('reset', 'hash-reset', 'password_reset'), 'the reset link stays')
  t.ok(await store.find('mfa', 'hash-mfa', 'mfa_login'), 'the mfaToken stays')
  await store.put('reset', 'hash-reset-2', LINK, 60_000)
  t.ok(await store.find('reset', 'hash-reset-2', 'password_reset'), 'a token that replaces its slot takes no more room')
  await store.put('challenge', 'hash-challenge', OPEN, 60_000)
  t.ok(await store.find('challenge', 'hash-challenge', 'passkey_login'), 'tokens of no account have room of their own')
  await later(1001, async () => {
    await store.put('another', 'hash-another', { ...LINK, accountId: 'account-2' }, 60_000)
    t.ok(await store.find('another', 'hash-another', 'password_reset'), 'an expired token makes room')
  })
  await store.consume('reset', 'hash-reset-2', 'password_reset')
  await store.put('third', 'hash-third', LINK, 60_000)
  t.equal(store.size, 3, 'so does a used one')
})
