import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import type { NewTrustedDevice, TrustedDeviceStore } from '../types.js'
import { sleep, uniqueNamespace, type ContractCheck } from './check.js'

export interface TrustedDeviceStoreHarness {
  /** A store over an empty namespace (table, key prefix…) of its own; two namespaces share nothing. */
  create: (namespace: string) => Promise<TrustedDeviceStore>
}

const random = (): string => randomBytes(16).toString('base64url')
const CONCURRENT = 20
const DAY_MS = 86_400_000

function device (label = 'Chrome on macOS'): NewTrustedDevice {
  return { id: random(), deviceHash: random(), label }
}

/**
 * The trusted-device store's promises (see TrustedDeviceStore): a trust is live until it expires, is removed,
 * or the account's generation moves on; endAll() moves it atomically, so a trust() racing it with the generation
 * read before never survives it, and concurrent endAll() calls lose no increment; one device has one trust.
 */
export function trustedDeviceStoreContract (harness: TrustedDeviceStoreHarness): ContractCheck[] {
  const fresh = async (): Promise<TrustedDeviceStore> => await harness.create(uniqueNamespace('trusted'))
  return [
    {
      name: 'a trust is listed and used with its hash, for its own account only',
      async run () {
        const store = await fresh()
        const [accountId, other] = [random(), random()]
        assert.equal(await store.generation(accountId), 0, 'generation 0 before anything')
        assert.deepEqual(await store.list(accountId), [])
        const laptop = device()
        const before = Date.now()
        assert.equal(await store.trust(accountId, laptop, DAY_MS, 0), true)
        const [listed, ...rest] = await store.list(accountId)
        assert.equal(rest.length, 0)
        assert.deepEqual({ ...listed, createdAt: 0, lastUsedAt: 0, trustedUntil: 0 }, { id: laptop.id, label: 'Chrome on macOS', createdAt: 0, lastUsedAt: 0, trustedUntil: 0 })
        assert.ok(Math.abs(listed!.createdAt - before) < 5000, 'createdAt is now (epoch ms)')
        assert.equal(listed!.lastUsedAt, listed!.createdAt, 'used when made')
        assert.ok(Math.abs(listed!.trustedUntil - listed!.createdAt - DAY_MS) < 5, 'trusted for ttlMs')
        await sleep(15)
        assert.deepEqual(await store.use(accountId, [random(), laptop.deviceHash]), { id: laptop.id, generation: 0 }, 'any of the hashes')
        const [used] = await store.list(accountId)
        assert.ok(used!.lastUsedAt > used!.createdAt, 'a use moves lastUsedAt')
        assert.equal(await store.use(accountId, [random()]), null, 'another device')
        assert.equal(await store.use(other, [laptop.deviceHash]), null, 'another account')
        assert.deepEqual(await store.list(other), [])
        assert.equal(await store.remove(other, laptop.id), false, 'another account cannot remove it')
        assert.equal((await store.list(accountId)).length, 1)
      }
    },
    {
      name: 'trusting a device again replaces its trust; remove ends one trust',
      async run () {
        const store = await fresh()
        const accountId = random()
        const laptop = device('Firefox on Linux')
        const phone = device('Safari on iOS')
        await store.trust(accountId, laptop, DAY_MS, 0)
        await store.trust(accountId, phone, DAY_MS, 0)
        const again = { ...laptop, id: random(), label: 'Firefox on Linux (again)' }
        assert.equal(await store.trust(accountId, again, DAY_MS, 0), true)
        assert.deepEqual((await store.list(accountId)).map(({ id, label }) => [id, label]).sort(), [[phone.id, 'Safari on iOS'], [again.id, 'Firefox on Linux (again)']].sort())
        assert.equal(await store.remove(accountId, phone.id), true)
        assert.equal(await store.remove(accountId, phone.id), false, 'once')
        assert.equal(await store.use(accountId, [phone.deviceHash]), null, 'removed')
        assert.equal(await store.remove(accountId, random()), false, 'unknown')
        assert.deepEqual((await store.use(accountId, [laptop.deviceHash]))?.id, again.id)
      }
    },
    {
      name: 'a trust ends by itself after ttlMs',
      async run () {
        const store = await fresh()
        const accountId = random()
        const laptop = device()
        await store.trust(accountId, laptop, 400, 0)
        assert.notEqual(await store.use(accountId, [laptop.deviceHash]), null)
        await sleep(600)
        assert.equal(await store.use(accountId, [laptop.deviceHash]), null)
        assert.deepEqual(await store.list(accountId), [])
        assert.equal(await store.remove(accountId, laptop.id), false)
      }
    },
    {
      name: 'endAll ends every trust of the account, and a trust made with an older generation is refused',
      async run () {
        const store = await fresh()
        const [accountId, other] = [random(), random()]
        const [laptop, phone, kept] = [device(), device(), device()]
        await store.trust(accountId, laptop, DAY_MS, 0)
        await store.trust(accountId, phone, DAY_MS, 0)
        await store.trust(other, kept, DAY_MS, 0)
        assert.equal(await store.endAll(accountId), 1)
        assert.equal(await store.generation(accountId), 1)
        assert.deepEqual(await store.list(accountId), [])
        assert.equal(await store.use(accountId, [laptop.deviceHash, phone.deviceHash]), null)
        assert.equal(await store.remove(accountId, laptop.id), false)
        assert.equal(await store.trust(accountId, device(), DAY_MS, 0), false, 'made with the generation before')
        assert.deepEqual(await store.list(accountId), [])
        assert.equal(await store.trust(accountId, laptop, DAY_MS, 1), true, 'trusted again in the new generation')
        assert.deepEqual(await store.use(accountId, [laptop.deviceHash]), { id: laptop.id, generation: 1 })
        assert.equal((await store.list(other)).length, 1, 'other accounts keep theirs')
        assert.equal(await store.generation(other), 0)
      }
    },
    {
      name: `${CONCURRENT} trusts racing an endAll with the generation read before it: none survives it`,
      async run () {
        const store = await fresh()
        const accountId = random()
        const generation = await store.generation(accountId)
        const racers = Array.from({ length: CONCURRENT }, () => device())
        const [, ...trusted] = await Promise.all([
          sleep(Math.floor(Math.random() * 5)).then(async () => await store.endAll(accountId)),
          ...racers.map(async (racer) => await store.trust(accountId, racer, DAY_MS, generation))
        ])
        assert.equal(await store.generation(accountId), generation + 1)
        assert.deepEqual(await store.list(accountId), [], `${trusted.filter(Boolean).length} were stored before the end; none is live`)
        assert.equal(await store.use(accountId, racers.map(({ deviceHash }) => deviceHash)), null)
      }
    },
    {
      name: `${CONCURRENT} concurrent endAll calls each advance the generation once; ${CONCURRENT} concurrent trusts of one device leave one`,
      async run () {
        const store = await fresh()
        const accountId = random()
        const ended = await Promise.all(Array.from({ length: CONCURRENT }, async () => await store.endAll(accountId)))
        assert.deepEqual([...ended].sort((a, b) => a - b), Array.from({ length: CONCURRENT }, (_, i) => i + 1), 'no increment lost')
        assert.equal(await store.generation(accountId), CONCURRENT)
        const laptop = device()
        const results = await Promise.all(Array.from({ length: CONCURRENT }, async () => await store.trust(accountId, { ...laptop, id: random() }, DAY_MS, CONCURRENT)))
        assert.ok(results.every(Boolean))
        assert.equal((await store.list(accountId)).length, 1, 'one trust per device')
      }
    },
    {
      name: 'forget (when the store has it) removes every trust of the account and its generation, and nothing of another account',
      async run () {
        const store = await fresh()
        if (store.forget === undefined) return
        const [accountId, other] = [random(), random()]
        const [laptop, phone, theirs] = [device(), device(), device()]
        await store.trust(accountId, laptop, DAY_MS, 0)
        await store.endAll(accountId)
        await store.trust(accountId, phone, DAY_MS, 1)
        await store.trust(other, theirs, DAY_MS, 0)
        await store.forget(accountId)
        assert.deepEqual(await store.list(accountId), [])
        assert.equal(await store.use(accountId, [laptop.deviceHash, phone.deviceHash]), null)
        assert.equal(await store.generation(accountId), 0, 'nothing of the account is kept, its generation neither')
        assert.deepEqual((await store.list(other)).map(({ id }) => id), [theirs.id])
        await store.forget(random())
      }
    }
  ]
}
