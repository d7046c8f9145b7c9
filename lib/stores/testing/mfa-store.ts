import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import type { MfaStore } from '../types.js'
import { uniqueNamespace, type ContractCheck } from './check.js'

export interface MfaStoreHarness {
  /** A store over an empty namespace (table, key prefix…) of its own; two namespaces share nothing. */
  create: (namespace: string) => Promise<MfaStore>
}

const random = (): string => randomBytes(16).toString('base64url')
const CONCURRENT = 20

/** An account with two factors on: secret `secret`, last step 100, recovery codes `codes`. */
async function enabled (store: MfaStore, codes = ['code-a', 'code-b']): Promise<{ accountId: string, secret: string }> {
  const [accountId, secret] = [random(), random()]
  assert.equal(await store.begin(accountId, secret), true)
  assert.equal(await store.enable(accountId, secret, 100, codes), true)
  return { accountId, secret }
}

/**
 * The second-factor store's promises (see MfaStore): a set-up turns on only with its own secret; a step is
 * accepted once and never one at or below the last (of concurrent callers with one step exactly one wins);
 * a recovery code is used once (likewise); nothing changes an account whose two factors are off.
 */
export function mfaStoreContract (harness: MfaStoreHarness): ContractCheck[] {
  const fresh = async (): Promise<MfaStore> => await harness.create(uniqueNamespace('mfa'))
  return [
    {
      name: 'a set-up is pending until enabled with its own secret, and then holds its step and codes',
      async run () {
        const store = await fresh()
        const [accountId, first, second] = [random(), random(), random()]
        assert.equal(await store.get(accountId), null)
        assert.equal(await store.begin(accountId, first), true)
        assert.deepEqual(await store.get(accountId), { secret: first, enabled: false, lastStep: 0, recoveryCodes: [] })
        assert.equal(await store.acceptStep(accountId, 5), false, 'no step is accepted while pending')
        assert.equal(await store.begin(accountId, second), true, 'a new set-up replaces a pending one')
        assert.equal(await store.enable(accountId, first, 7, ['x']), false, 'the replaced secret cannot be enabled')
        assert.equal(await store.enable(accountId, second, 7, ['x', 'y']), true)
        assert.deepEqual(await store.get(accountId), { secret: second, enabled: true, lastStep: 7, recoveryCodes: ['x', 'y'] })
        assert.equal(await store.enable(accountId, second, 8, []), false, 'enabled once')
        assert.equal(await store.begin(accountId, random()), false, 'no set-up while on')
        assert.equal((await store.get(accountId))?.secret, second)
      }
    },
    {
      name: `of ${CONCURRENT} concurrent enables of one pending set-up exactly one turns it on`,
      async run () {
        const store = await fresh()
        const [accountId, secret] = [random(), random()]
        await store.begin(accountId, secret)
        const results = await Promise.all(Array.from({ length: CONCURRENT }, async (_, i) => await store.enable(accountId, secret, 10 + i, [`code-${i}`])))
        assert.equal(results.filter(Boolean).length, 1)
        const record = await store.get(accountId)
        const winner = results.indexOf(true)
        assert.deepEqual(record, { secret, enabled: true, lastStep: 10 + winner, recoveryCodes: [`code-${winner}`] }, 'the winner\'s step and codes, not a mix')
      }
    },
    {
      name: 'a step is accepted once, and never one at or below the last accepted',
      async run () {
        const store = await fresh()
        const { accountId } = await enabled(store)
        assert.equal(await store.acceptStep(accountId, 100), false, 'the step enabled with')
        assert.equal(await store.acceptStep(accountId, 99), false)
        assert.equal(await store.acceptStep(accountId, 101), true)
        assert.equal(await store.acceptStep(accountId, 101), false, 'replayed')
        assert.equal(await store.acceptStep(accountId, 103), true)
        assert.equal(await store.acceptStep(accountId, 102), false, 'an earlier step after a later one')
        assert.equal((await store.get(accountId))?.lastStep, 103)
        assert.equal(await store.acceptStep(random(), 200), false, 'an unknown account')
      }
    },
    {
      name: `of ${CONCURRENT} concurrent uses of one step exactly one is accepted`,
      async run () {
        const store = await fresh()
        const { accountId } = await enabled(store)
        const results = await Promise.all(Array.from({ length: CONCURRENT }, async () => await store.acceptStep(accountId, 101)))
        assert.equal(results.filter(Boolean).length, 1)
      }
    },
    {
      name: `a recovery code works once; of ${CONCURRENT} concurrent uses exactly one succeeds`,
      async run () {
        const store = await fresh()
        const { accountId } = await enabled(store, ['code-a', 'code-b', 'code-c'])
        assert.equal(await store.useRecoveryCode(accountId, ['nope', 'code-b']), true, 'any of the candidates')
        assert.equal(await store.useRecoveryCode(accountId, ['code-b']), false, 'used')
        const results = await Promise.all(Array.from({ length: CONCURRENT }, async () => await store.useRecoveryCode(accountId, ['code-a'])))
        assert.equal(results.filter(Boolean).length, 1)
        assert.deepEqual((await store.get(accountId))?.recoveryCodes, ['code-c'])
        assert.equal(await store.useRecoveryCode(random(), ['code-c']), false, 'an unknown account')
      }
    },
    {
      name: 'recovery codes are replaced only while on; disable removes everything',
      async run () {
        const store = await fresh()
        const { accountId } = await enabled(store)
        assert.equal(await store.replaceRecoveryCodes(accountId, ['new-1', 'new-2']), true)
        assert.equal(await store.useRecoveryCode(accountId, ['code-a']), false, 'the old codes are gone')
        assert.equal(await store.useRecoveryCode(accountId, ['new-2']), true)
        assert.equal(await store.disable(accountId), true)
        assert.equal(await store.get(accountId), null)
        assert.equal(await store.disable(accountId), false, 'already off')
        assert.equal(await store.replaceRecoveryCodes(accountId, ['x']), false)
        assert.equal(await store.useRecoveryCode(accountId, ['new-1']), false)
        const pending = random()
        await store.begin(pending, random())
        assert.equal(await store.replaceRecoveryCodes(pending, ['x']), false, 'not while pending')
        assert.equal(await store.disable(pending), false, 'a pending set-up was not on')
        assert.equal(await store.get(pending), null, 'but is removed')
      }
    },
    {
      name: 'secrets() lists every record, on or pending (over 500 of them), and no removed one',
      async run () {
        const store = await fresh()
        const on = await enabled(store)
        const [pending, pendingSecret, removed] = [random(), random(), random()]
        await store.begin(pending, pendingSecret)
        await store.begin(removed, random())
        await store.disable(removed)
        const many = Array.from({ length: 520 }, () => [random(), random()] as const)
        await Promise.all(many.map(async ([accountId, secret]) => await store.begin(accountId, secret)))
        const listed = new Map<string, string>()
        for await (const { accountId, secret } of store.secrets()) {
          assert.equal(listed.has(accountId), false, `${accountId} listed twice`)
          listed.set(accountId, secret)
        }
        assert.equal(listed.size, 522)
        assert.equal(listed.get(on.accountId), on.secret)
        assert.equal(listed.get(pending), pendingSecret)
        assert.equal(listed.has(removed), false)
        for (const [accountId, secret] of many) assert.equal(listed.get(accountId), secret)
      }
    },
    {
      name: `reseal() replaces only the secret it was given (of ${CONCURRENT} concurrent reseals exactly one wins), and nothing else`,
      async run () {
        const store = await fresh()
        const { accountId, secret } = await enabled(store)
        await store.acceptStep(accountId, 120)
        const resealed = Array.from({ length: CONCURRENT }, random)
        const results = await Promise.all(resealed.map(async (next) => await store.reseal(accountId, secret, next)))
        assert.equal(results.filter(Boolean).length, 1)
        const winner = resealed[results.indexOf(true)]!
        assert.deepEqual(await store.get(accountId), { secret: winner, enabled: true, lastStep: 120, recoveryCodes: ['code-a', 'code-b'] })
        assert.equal(await store.reseal(accountId, secret, random()), false, 'the old secret is gone')
        assert.equal(await store.reseal(random(), secret, random()), false, 'an unknown account')
        const pending = random()
        const pendingSecret = random()
        await store.begin(pending, pendingSecret)
        const next = random()
        assert.equal(await store.reseal(pending, pendingSecret, next), true, 'a pending set-up is resealed too')
        assert.equal(await store.enable(pending, next, 3, []), true, 'and enabled under its new seal')
      }
    }
  ]
}
