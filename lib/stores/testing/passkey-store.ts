import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import type { PasskeyStore, StoredPasskey } from '../types.js'
import { uniqueNamespace, type ContractCheck } from './check.js'

export interface PasskeyStoreHarness {
  /**
   * A store over an empty namespace (table, key prefix…) of its own; two namespaces share nothing. A store whose
   * calls run in the order they are sent (one connection) races as two instances do only when its commands are
   * spread over two connections: run the suite that way too.
   */
  create: (namespace: string) => Promise<PasskeyStore>
}

const random = (): string => randomBytes(16).toString('base64url')
const CONCURRENT = 20

let clock = 1_700_000_000_000
/** A passkey of `accountId` with every field set, each a little different. */
export function samplePasskey (accountId: string, overrides: Partial<StoredPasskey> = {}): StoredPasskey {
  return {
    id: random(),
    accountId,
    publicKey: randomBytes(77).toString('base64url'),
    counter: 0,
    backupEligible: false,
    backedUp: false,
    transports: ['internal', 'hybrid'],
    name: 'Passkey ✓',
    createdAt: clock++,
    lastUsedAt: null,
    ...overrides
  }
}

/**
 * The passkey store's promises (see PasskeyStore): a credential id is stored once across every account (of
 * concurrent adds, one wins); an account never passes `max`; the counter moves by compare-and-set (of
 * concurrent uses with one expected counter, one wins); list and remove see the owner's passkeys only; a
 * user handle is made once; removeAll advances the account's generation, and an add racing it never leaves a
 * passkey behind.
 */
export function passkeyStoreContract (harness: PasskeyStoreHarness): ContractCheck[] {
  const fresh = async (): Promise<PasskeyStore> => await harness.create(uniqueNamespace('passkeys'))
  return [
    {
      name: 'a passkey reads back exactly as added; the owner lists them oldest first',
      async run () {
        const store = await fresh()
        const accountId = random()
        const first = samplePasskey(accountId, { counter: 4_294_967_295, backupEligible: true, backedUp: true, transports: [] })
        const second = samplePasskey(accountId, { createdAt: first.createdAt + 1000 })
        assert.equal(await store.add(second, 10, 0), 'added')
        assert.equal(await store.add(first, 10, 0), 'added')
        assert.deepEqual(await store.get(first.id), first)
        assert.deepEqual(await store.get(second.id), second)
        assert.deepEqual(await store.list(accountId), [first, second])
        assert.deepEqual(await store.list(random()), [])
        assert.equal(await store.get(random()), null)
      }
    },
    {
      name: 'a credential id is stored once across every account, also of concurrent adds',
      async run () {
        const store = await fresh()
        const taken = samplePasskey(random())
        assert.equal(await store.add(taken, 10, 0), 'added')
        assert.equal(await store.add(samplePasskey(random(), { id: taken.id }), 10, 0), 'duplicate')
        assert.equal(await store.add(samplePasskey(taken.accountId, { id: taken.id }), 10, 0), 'duplicate')
        assert.equal((await store.get(taken.id))?.accountId, taken.accountId)
        const id = random()
        const results = await Promise.all(Array.from({ length: CONCURRENT }, async () => await store.add(samplePasskey(random(), { id }), 10, 0)))
        assert.equal(results.filter((r) => r === 'added').length, 1)
        assert.equal(results.filter((r) => r === 'duplicate').length, CONCURRENT - 1)
      }
    },
    {
      name: `an account never passes max, even with ${CONCURRENT} concurrent adds`,
      async run () {
        const store = await fresh()
        const accountId = random()
        const results = await Promise.all(Array.from({ length: CONCURRENT }, async () => await store.add(samplePasskey(accountId), 3, 0)))
        assert.equal(results.filter((r) => r === 'added').length, 3)
        assert.equal(results.filter((r) => r === 'limit').length, CONCURRENT - 3)
        assert.equal((await store.list(accountId)).length, 3)
        assert.equal(await store.add(samplePasskey(random()), 3, 0), 'added', 'another account has its own count')
      }
    },
    {
      name: `the counter moves by compare-and-set: of ${CONCURRENT} concurrent uses one wins`,
      async run () {
        const store = await fresh()
        const passkey = samplePasskey(random(), { counter: 5 })
        await store.add(passkey, 10, 0)
        assert.equal(await store.use(passkey.id, 4, 6, false, 1000), false, 'a stale expected counter')
        const results = await Promise.all(Array.from({ length: CONCURRENT }, async (_, i) => await store.use(passkey.id, 5, 6 + i, true, 2000 + i)))
        assert.equal(results.filter(Boolean).length, 1)
        const winner = results.indexOf(true)
        assert.deepEqual(await store.get(passkey.id), { ...passkey, counter: 6 + winner, backedUp: true, lastUsedAt: 2000 + winner }, 'the winner\'s counter and time')
        assert.equal(await store.use(random(), 0, 1, false, 1), false, 'an unknown passkey')
      }
    },
    {
      name: 'remove and removeAll see the owner\'s passkeys only; a removed passkey is gone for use() too',
      async run () {
        const store = await fresh()
        const [ada, bea] = [random(), random()]
        const [a1, a2, b1] = [samplePasskey(ada), samplePasskey(ada), samplePasskey(bea)]
        for (const passkey of [a1, a2, b1]) assert.equal(await store.add(passkey, 10, 0), 'added')
        assert.equal(await store.remove(bea, a1.id), false, 'another account\'s passkey')
        assert.equal(await store.remove(ada, random()), false)
        assert.equal(await store.remove(ada, a1.id), true)
        assert.equal(await store.remove(ada, a1.id), false, 'removed once')
        assert.equal(await store.get(a1.id), null)
        assert.equal(await store.use(a1.id, 0, 1, false, 1), false)
        assert.equal(await store.add(samplePasskey(bea, { id: a1.id }), 10, 0), 'added', 'a removed id is free again')
        assert.equal(await store.removeAll(ada), 1)
        assert.deepEqual(await store.list(ada), [])
        assert.equal(await store.removeAll(ada), 0)
        assert.equal((await store.list(bea)).length, 2)
        assert.equal(await store.add(samplePasskey(ada), 1, await store.generation(ada)), 'added', 'removed passkeys free their places')
      }
    },
    {
      name: 'removeAll advances the generation, also with nothing to remove; an add with an older generation stores nothing',
      async run () {
        const store = await fresh()
        const [ada, bea] = [random(), random()]
        assert.equal(await store.generation(ada), 0, 'before any removal')
        assert.equal(await store.removeAll(ada), 0)
        const first = await store.generation(ada)
        assert.notEqual(first, 0, 'advanced without passkeys')
        assert.equal(await store.generation(bea), 0, 'another account keeps its own')
        const late = samplePasskey(ada)
        assert.equal(await store.add(late, 10, 0), 'outrun')
        assert.equal(await store.get(late.id), null)
        assert.deepEqual(await store.list(ada), [])
        assert.equal(await store.use(late.id, 0, 1, false, 1), false)
        assert.equal(await store.add(late, 10, first), 'added', 'the current generation adds, and the outrun add left its id free')
        assert.equal(await store.removeAll(ada), 1)
        assert.notEqual(await store.generation(ada), first, 'advanced again')
        assert.equal(await store.add(samplePasskey(ada), 10, first), 'outrun')
        assert.equal(await store.add(samplePasskey(bea), 10, 0), 'added', 'another account\'s generation did not move')
      }
    },
    {
      name: `of ${CONCURRENT} adds racing a removeAll, none leaves a passkey behind: each is removed with the others or refused`,
      async run () {
        const store = await fresh()
        // Waits for `n` round trips to the store, so that callers start at different steps of each other's calls.
        const later = async (n: number): Promise<void> => { for (let i = 0; i < n; i++) await store.generation(random()) }
        for (let round = 0; round < 6; round++) {
          const accountId = random()
          const generation = await store.generation(accountId)
          const passkeys = Array.from({ length: CONCURRENT }, () => samplePasskey(accountId))
          // The removal starts among the adds, so it lands between the steps of some of them.
          const adds = passkeys.map(async (passkey, i) => { await later(i % 4); return await store.add(passkey, CONCURRENT, generation) })
          const removal = (async () => { await later(round % 3); return await store.removeAll(accountId) })()
          const [results, removed] = await Promise.all([Promise.all(adds), removal])
          assert.ok(results.every((result) => result === 'added' || result === 'outrun'), results.join())
          assert.ok(removed <= results.filter((result) => result === 'added').length, 'removed only what was added')
          assert.deepEqual(await store.list(accountId), [], 'nothing listed after the removal')
          for (const passkey of passkeys) {
            assert.equal(await store.get(passkey.id), null, 'nothing found after the removal')
            assert.equal(await store.use(passkey.id, 0, 1, false, 1), false, 'nothing usable after the removal')
          }
          const after = await store.generation(accountId)
          assert.equal(await store.add(samplePasskey(accountId), CONCURRENT, after), 'added', 'a place is free for an add of the new generation')
        }
      }
    },
    {
      name: `a user handle is made once per account, also of ${CONCURRENT} concurrent callers`,
      async run () {
        const store = await fresh()
        const accountId = random()
        const handles = await Promise.all(Array.from({ length: CONCURRENT }, async () => await store.userHandle(accountId, random())))
        assert.equal(new Set(handles).size, 1)
        assert.equal(await store.userHandle(accountId, random()), handles[0])
        assert.notEqual(await store.userHandle(random(), 'other'), handles[0])
      }
    },
    {
      name: 'forget (when the store has it) removes the account\'s passkeys and its user handle, and nothing of another account',
      async run () {
        const store = await fresh()
        if (store.forget === undefined) return
        const [ada, bea] = [random(), random()]
        const handle = await store.userHandle(ada, random())
        const beasHandle = await store.userHandle(bea, random())
        const [a1, a2, b1] = [samplePasskey(ada), samplePasskey(ada), samplePasskey(bea)]
        for (const passkey of [a1, a2, b1]) assert.equal(await store.add(passkey, 10, 0), 'added')
        assert.equal(await store.forget(ada), 2)
        assert.deepEqual(await store.list(ada), [])
        assert.equal(await store.get(a1.id), null)
        const candidate = random()
        assert.equal(await store.userHandle(ada, candidate), candidate, `the handle ${handle} is gone: a new one is made`)
        assert.equal(await store.userHandle(bea, random()), beasHandle, 'another account keeps its handle')
        assert.deepEqual((await store.list(bea)).map(({ id }) => id), [b1.id])
        assert.equal(await store.forget(random()), 0)
      }
    }
  ]
}
