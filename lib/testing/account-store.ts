import { strict as assert } from 'node:assert'
import type { AccountStore, StoredAccount } from '../stores/types.js'
import { uniqueNamespace, type ContractCheck } from './check.js'

export interface AccountStoreUnderTest {
  store: AccountStore
  /** Creates an account the way the host application would (`email` is already normalised). */
  add: (account: { email: string, passwordHash: string, active?: boolean }) => Promise<StoredAccount>
}

export interface AccountStoreHarness {
  /** A store over an empty namespace (table, key prefix…) of its own; two namespaces share nothing. */
  create: (namespace: string) => Promise<AccountStoreUnderTest>
}

const HASH_A = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE'
const HASH_B = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmI'

function assertAccount (actual: StoredAccount | null, expected: Partial<StoredAccount>): StoredAccount {
  assert.ok(actual !== null, 'account found')
  assert.equal(typeof actual.id, 'string')
  assert.equal(typeof actual.credentialVersion, 'number')
  for (const [key, value] of Object.entries(expected)) assert.deepEqual(actual[key as keyof StoredAccount], value, key)
  return actual
}

/** The account store's promises: lookups, inactive accounts, compare-and-set updates, isolation. */
export function accountStoreContract (harness: AccountStoreHarness): ContractCheck[] {
  const fresh = async (): Promise<AccountStoreUnderTest> => await harness.create(uniqueNamespace('accounts'))
  return [
    {
      name: 'finds an account by normalised e-mail and by id, with every field',
      async run () {
        const { store, add } = await fresh()
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const byEmail = assertAccount(await store.findByEmail('ada@example.com'), { email: 'ada@example.com', passwordHash: HASH_A, active: true })
        assert.equal(byEmail.id, added.id)
        assert.ok(Number.isSafeInteger(byEmail.credentialVersion) && byEmail.credentialVersion >= 0, 'credentialVersion is a whole number')
        assertAccount(await store.findById(added.id), { id: added.id, email: 'ada@example.com', passwordHash: HASH_A, active: true })
      }
    },
    {
      name: 'answers null for an unknown e-mail or id',
      async run () {
        const { store, add } = await fresh()
        await add({ email: 'ada@example.com', passwordHash: HASH_A })
        assert.equal(await store.findByEmail('nobody@example.com'), null)
        assert.equal(await store.findByEmail('ada@example.co'), null)
        assert.equal(await store.findById('00000000-0000-4000-8000-000000000000'), null)
        assert.equal(await store.findById('not-an-id-of-any-shape'), null, 'an id of another shape is just unknown')
      }
    },
    {
      name: 'returns inactive accounts too, marked inactive',
      async run () {
        const { store, add } = await fresh()
        const added = await add({ email: 'gone@example.com', passwordHash: HASH_A, active: false })
        assertAccount(await store.findByEmail('gone@example.com'), { active: false })
        assertAccount(await store.findById(added.id), { active: false })
      }
    },
    {
      name: 'a password change replaces the hash and advances the credential version',
      async run () {
        const { store, add } = await fresh()
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const before = assertAccount(await store.findById(added.id), {})
        assert.equal(await store.updatePasswordHash({ id: added.id, expectedHash: HASH_A, newHash: HASH_B, advanceCredentialVersion: true }), true)
        assertAccount(await store.findByEmail('ada@example.com'), { passwordHash: HASH_B, credentialVersion: before.credentialVersion + 1 })
      }
    },
    {
      name: 'a rehash replaces the hash and keeps the credential version',
      async run () {
        const { store, add } = await fresh()
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const before = assertAccount(await store.findById(added.id), {})
        assert.equal(await store.updatePasswordHash({ id: added.id, expectedHash: HASH_A, newHash: HASH_B, advanceCredentialVersion: false }), true)
        assertAccount(await store.findById(added.id), { passwordHash: HASH_B, credentialVersion: before.credentialVersion })
      }
    },
    {
      name: 'an update with a stale expected hash, or for no account, changes nothing',
      async run () {
        const { store, add } = await fresh()
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const before = assertAccount(await store.findById(added.id), {})
        assert.equal(await store.updatePasswordHash({ id: added.id, expectedHash: HASH_B, newHash: HASH_B, advanceCredentialVersion: true }), false)
        assertAccount(await store.findById(added.id), { passwordHash: HASH_A, credentialVersion: before.credentialVersion })
        assert.equal(await store.updatePasswordHash({ id: '00000000-0000-4000-8000-000000000000', expectedHash: HASH_A, newHash: HASH_B, advanceCredentialVersion: true }), false)
      }
    },
    {
      name: 'of concurrent compare-and-set updates exactly one wins',
      async run () {
        const { store, add } = await fresh()
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const before = assertAccount(await store.findById(added.id), {})
        const candidates = Array.from({ length: 12 }, (_, i) => `${HASH_B}${i}`)
        const results = await Promise.all(candidates.map(async (newHash) =>
          await store.updatePasswordHash({ id: added.id, expectedHash: HASH_A, newHash, advanceCredentialVersion: true })))
        assert.equal(results.filter(Boolean).length, 1, `one winner in ${results.join(',')}`)
        const after = assertAccount(await store.findById(added.id), { credentialVersion: before.credentialVersion + 1 })
        assert.equal(after.passwordHash, candidates[results.indexOf(true)])
      }
    },
    {
      name: 'stores in different namespaces share nothing',
      async run () {
        const first = await fresh()
        const second = await fresh()
        const added = await first.add({ email: 'ada@example.com', passwordHash: HASH_A })
        assert.equal(await second.store.findByEmail('ada@example.com'), null)
        assert.equal(await second.store.findById(added.id), null)
        const other = await second.add({ email: 'ada@example.com', passwordHash: HASH_B })
        assert.equal(await second.store.updatePasswordHash({ id: other.id, expectedHash: HASH_B, newHash: HASH_A, advanceCredentialVersion: true }), true)
        assertAccount(await first.store.findByEmail('ada@example.com'), { passwordHash: HASH_A })
      }
    }
  ]
}
