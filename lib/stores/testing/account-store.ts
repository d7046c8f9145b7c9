import { strict as assert } from 'node:assert'
import type { AccountStore, PasswordAuthAccount, StoredAccount } from '../types.js'
import { uniqueNamespace, type ContractCheck } from './check.js'

export interface AccountStoreUnderTest {
  store: AccountStore
  /**
   * Creates an account the way the host application would (`email` is already normalised), with the
   * values of `fields` when given.
   */
  add: (account: { email: string, passwordHash: string, active?: boolean } & Record<string, unknown>) => Promise<StoredAccount>
  /**
   * Values of your own account fields (declaration merging) that `add` stores, e.g. `{ displayName: 'Ada' }`:
   * both lookups must return them as given.
   */
  fields?: Record<string, unknown>
  /**
   * Deactivates or reactivates an account the way your application does (e.g. the included stores'
   * setActive): deactivation must advance the credential version, so reactivation revives no token.
   */
  setActive?: (id: string, active: boolean) => Promise<unknown>
}

export interface AccountStoreHarness {
  /** A store over an empty namespace (table, key prefix…) of its own; two namespaces share nothing. */
  create: (namespace: string) => Promise<AccountStoreUnderTest>
}

const HASH_A = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE'
const HASH_B = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmI'
const UNKNOWN_IDS = ['00000000-0000-4000-8000-000000000000', '987654321', '-1', '99999999999999999999', 'not-an-id-of-any-shape', '']

function assertAccount<T extends PasswordAuthAccount> (actual: T | null, expected: Partial<StoredAccount>): T {
  assert.ok(actual !== null, 'account found')
  assert.equal(typeof actual.id, 'string')
  assert.equal(typeof actual.credentialVersion, 'number')
  for (const [key, value] of Object.entries(expected)) assert.deepEqual((actual as Record<string, unknown>)[key], value, key)
  return actual
}

/** The hash, read the way the plugin reads it: findById never returns it. */
async function storedHash (store: AccountStore, email: string): Promise<string> {
  return assertAccount(await store.findByEmail(email), {}).passwordHash
}

/**
 * The account store's promises: lookups (findById without the hash), your own fields, inactive accounts,
 * deactivation that ends sessions for good, compare-and-set updates, isolation.
 */
export function accountStoreContract (harness: AccountStoreHarness): ContractCheck[] {
  const fresh = async (): Promise<AccountStoreUnderTest> => await harness.create(uniqueNamespace('accounts'))
  return [
    {
      name: 'finds an account by normalised e-mail (with its hash) and by id (without it)',
      async run () {
        const { store, add } = await fresh()
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const byEmail = assertAccount(await store.findByEmail('ada@example.com'), { email: 'ada@example.com', passwordHash: HASH_A, active: true })
        assert.equal(byEmail.id, added.id)
        assert.ok(Number.isSafeInteger(byEmail.credentialVersion) && byEmail.credentialVersion >= 0, 'credentialVersion is a whole number')
        const byId = assertAccount(await store.findById(added.id), { id: added.id, email: 'ada@example.com', active: true, credentialVersion: byEmail.credentialVersion })
        assert.ok(!('passwordHash' in byId), 'findById returns no password hash')
      }
    },
    {
      name: 'returns your own account fields from both lookups (when the harness gives fields)',
      async run () {
        const { store, add, fields } = await fresh()
        if (fields === undefined) return
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A, ...fields })
        assertAccount(await store.findByEmail('ada@example.com'), fields)
        assertAccount(await store.findById(added.id), fields)
      }
    },
    {
      name: 'answers null for an unknown e-mail, or an unknown id of any shape',
      async run () {
        const { store, add } = await fresh()
        await add({ email: 'ada@example.com', passwordHash: HASH_A })
        assert.equal(await store.findByEmail('nobody@example.com'), null)
        assert.equal(await store.findByEmail('ada@example.co'), null)
        assert.equal(await store.findByEmail(''), null)
        for (const id of UNKNOWN_IDS) assert.equal(await store.findById(id), null, `findById(${JSON.stringify(id)})`)
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
      name: 'deactivation advances the credential version; reactivation keeps it (when the harness gives setActive)',
      async run () {
        const { store, add, setActive } = await fresh()
        if (setActive === undefined) return
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const before = assertAccount(await store.findById(added.id), { active: true })
        await setActive(added.id, false)
        const inactive = assertAccount(await store.findById(added.id), { active: false })
        assert.ok(inactive.credentialVersion > before.credentialVersion, 'deactivation advanced the credential version')
        await setActive(added.id, true)
        const revived = assertAccount(await store.findById(added.id), { active: true })
        assert.ok(revived.credentialVersion > before.credentialVersion, 'reactivation did not bring the old version back')
        assertAccount(await store.findByEmail('ada@example.com'), { active: true, credentialVersion: revived.credentialVersion, passwordHash: HASH_A })
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
        assertAccount(await store.findById(added.id), { credentialVersion: before.credentialVersion + 1 })
      }
    },
    {
      name: 'a rehash replaces the hash and keeps the credential version',
      async run () {
        const { store, add } = await fresh()
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const before = assertAccount(await store.findById(added.id), {})
        assert.equal(await store.updatePasswordHash({ id: added.id, expectedHash: HASH_A, newHash: HASH_B, advanceCredentialVersion: false }), true)
        assertAccount(await store.findByEmail('ada@example.com'), { passwordHash: HASH_B, credentialVersion: before.credentialVersion })
      }
    },
    {
      name: 'an update with a stale expected hash, or for no account, changes nothing',
      async run () {
        const { store, add } = await fresh()
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const before = assertAccount(await store.findById(added.id), {})
        assert.equal(await store.updatePasswordHash({ id: added.id, expectedHash: HASH_B, newHash: HASH_B, advanceCredentialVersion: true }), false)
        assertAccount(await store.findByEmail('ada@example.com'), { passwordHash: HASH_A, credentialVersion: before.credentialVersion })
        for (const id of UNKNOWN_IDS) {
          assert.equal(await store.updatePasswordHash({ id, expectedHash: HASH_A, newHash: HASH_B, advanceCredentialVersion: true }), false, `id ${JSON.stringify(id)}`)
        }
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
        assertAccount(await store.findById(added.id), { credentialVersion: before.credentialVersion + 1 })
        assert.equal(await storedHash(store, 'ada@example.com'), candidates[results.indexOf(true)])
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
        assert.equal(await storedHash(first.store, 'ada@example.com'), HASH_A)
      }
    },
    {
      name: 'create (registration, when the store has it): an active account with its fields; null for a taken e-mail',
      async run () {
        const { store, fields = {} } = await fresh()
        if (store.create === undefined) return
        const created = assertAccount(await store.create({ email: 'ada@example.com', passwordHash: HASH_A, fields }), { email: 'ada@example.com', active: true, ...fields })
        assertAccount(await store.findByEmail('ada@example.com'), { id: created.id, passwordHash: HASH_A, active: true, ...fields })
        assertAccount(await store.findById(created.id), { email: 'ada@example.com', ...fields })
        assert.equal(await store.create({ email: 'ada@example.com', passwordHash: HASH_B, fields }), null, 'the address is taken')
        assert.equal(await storedHash(store, 'ada@example.com'), HASH_A, 'and keeps its hash')
      }
    },
    {
      name: 'create: of 10 concurrent creations of one address exactly one account results',
      async run () {
        const { store, fields = {} } = await fresh()
        if (store.create === undefined) return
        const hashes = Array.from({ length: 10 }, (_, i) => i % 2 === 0 ? HASH_A : HASH_B)
        const results = await Promise.all(hashes.map(async (passwordHash) => await store.create!({ email: 'race@example.com', passwordHash, fields })))
        const winners = results.filter((result) => result !== null)
        assert.equal(winners.length, 1, 'one account')
        assert.equal(await storedHash(store, 'race@example.com'), winners[0]!.passwordHash)
      }
    },
    ...emailChangeAndDeletion(fresh)
  ]
}

/** updateEmail and delete, for stores that have them (e-mail change and account deletion need them). */
function emailChangeAndDeletion (fresh: () => Promise<AccountStoreUnderTest>): ContractCheck[] {
  return [
    {
      name: 'updateEmail (when the store has it) moves the address and keeps the credential version',
      async run () {
        const { store, add } = await fresh()
        if (store.updateEmail === undefined) return
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const before = assertAccount(await store.findById(added.id), {})
        assert.equal(await store.updateEmail({ id: added.id, expectedEmail: 'ada@example.com', expectedCredentialVersion: before.credentialVersion, newEmail: 'ada@example.net' }), true)
        assert.equal(await store.findByEmail('ada@example.com'), null, 'the old address is free')
        assertAccount(await store.findByEmail('ada@example.net'), { id: added.id, passwordHash: HASH_A, credentialVersion: before.credentialVersion })
        assertAccount(await store.findById(added.id), { email: 'ada@example.net', credentialVersion: before.credentialVersion })
      }
    },
    {
      name: 'updateEmail changes nothing with a stale address or credential version, for another account\'s address, or for no account',
      async run () {
        const { store, add } = await fresh()
        if (store.updateEmail === undefined) return
        const ada = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        await add({ email: 'bob@example.com', passwordHash: HASH_B })
        const { credentialVersion } = assertAccount(await store.findById(ada.id), {})
        const change = { id: ada.id, expectedEmail: 'ada@example.com', expectedCredentialVersion: credentialVersion, newEmail: 'ada@example.net' }
        assert.equal(await store.updateEmail({ ...change, expectedEmail: 'old@example.com' }), false, 'stale address')
        assert.equal(await store.updateEmail({ ...change, expectedCredentialVersion: credentialVersion + 1 }), false, 'stale credential version')
        assert.equal(await store.updateEmail({ ...change, newEmail: 'bob@example.com' }), false, 'taken by another account')
        for (const id of UNKNOWN_IDS) assert.equal(await store.updateEmail({ ...change, id }), false, `id ${JSON.stringify(id)}`)
        assertAccount(await store.findById(ada.id), { email: 'ada@example.com', credentialVersion })
        assertAccount(await store.findByEmail('bob@example.com'), { passwordHash: HASH_B })
      }
    },
    {
      name: 'updateEmail: of 12 concurrent changes of one account (one change sent 6 times, and 6 others) exactly one wins',
      async run () {
        const { store, add } = await fresh()
        if (store.updateEmail === undefined) return
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const { credentialVersion } = assertAccount(await store.findById(added.id), {})
        const targets = Array.from({ length: 12 }, (_, i) => i < 6 ? 'same@example.net' : `other${i}@example.net`)
        const results = await Promise.all(targets.map(async (newEmail) =>
          await store.updateEmail!({ id: added.id, expectedEmail: 'ada@example.com', expectedCredentialVersion: credentialVersion, newEmail })))
        assert.equal(results.filter(Boolean).length, 1, `one winner in ${results.join(',')}`)
        assertAccount(await store.findById(added.id), { email: targets[results.indexOf(true)] })
      }
    },
    {
      name: 'updateEmail racing a password change: the change made with the old credential version loses, all or nothing',
      async run () {
        const { store, add } = await fresh()
        if (store.updateEmail === undefined) return
        const added = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const { credentialVersion } = assertAccount(await store.findById(added.id), {})
        const change = { id: added.id, expectedEmail: 'ada@example.com', expectedCredentialVersion: credentialVersion, newEmail: 'ada@example.net' }
        assert.equal(await store.updatePasswordHash({ id: added.id, expectedHash: HASH_A, newHash: HASH_B, advanceCredentialVersion: true }), true)
        assert.equal(await store.updateEmail(change), false, 'outrun by the password change')
        assertAccount(await store.findById(added.id), { email: 'ada@example.com', credentialVersion: credentialVersion + 1 })
        // Sent together: whichever order the store takes them in, both land whole and nothing lands half.
        const [moved, changed] = await Promise.all([
          store.updateEmail({ ...change, expectedCredentialVersion: credentialVersion + 1 }),
          store.updatePasswordHash({ id: added.id, expectedHash: HASH_B, newHash: HASH_A, advanceCredentialVersion: true })
        ])
        assert.equal(changed, true, 'the password change is a compare-and-set on the hash alone')
        const after = assertAccount(await store.findById(added.id), { credentialVersion: credentialVersion + 2 })
        assert.equal(after.email, moved ? 'ada@example.net' : 'ada@example.com')
        assert.equal(await storedHash(store, after.email), HASH_A)
      }
    },
    {
      name: 'delete (when the store has it) removes the account: both lookups miss, the address is free, a second delete is false',
      async run () {
        const { store, add } = await fresh()
        if (store.delete === undefined) return
        const ada = await add({ email: 'ada@example.com', passwordHash: HASH_A })
        const bob = await add({ email: 'bob@example.com', passwordHash: HASH_B })
        assert.equal(await store.delete(ada.id), true)
        assert.equal(await store.findByEmail('ada@example.com'), null)
        assert.equal(await store.findById(ada.id), null)
        assert.equal(await store.delete(ada.id), false)
        for (const id of UNKNOWN_IDS) assert.equal(await store.delete(id), false, `id ${JSON.stringify(id)}`)
        assertAccount(await store.findById(bob.id), { email: 'bob@example.com' })
        const again = await add({ email: 'ada@example.com', passwordHash: HASH_B })
        assert.notEqual(again.id, undefined, 'the address takes a new account')
      }
    }
  ]
}
