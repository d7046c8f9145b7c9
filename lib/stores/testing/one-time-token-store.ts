import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import type { OneTimeToken, OneTimeTokenStore } from '../types.js'
import { sleep, uniqueNamespace, type ContractCheck } from './check.js'

export interface OneTimeTokenStoreHarness {
  /** A store over an empty namespace (table, key prefix…) of its own; two namespaces share nothing. */
  create: (namespace: string) => Promise<OneTimeTokenStore>
  /**
   * Tokens of no account one check puts (default 1000), to see that none takes the place of an account's token.
   * A store that bounds what it holds should be created with a bound below it, so the check reaches the bound.
   */
  flood?: number
}

const TTL = 60_000
const random = (): string => randomBytes(32).toString('base64url')

function token (overrides: Partial<OneTimeToken> = {}): OneTimeToken {
  return { purpose: 'password_reset', accountId: 'account-1', email: 'ada@example.com', credentialVersion: 3, ...overrides }
}

/**
 * The one-time token store's promises (see OneTimeTokenStore): a token is found only with its hash and
 * purpose, consumed once (of concurrent callers exactly one wins), replaced by the next one in its slot,
 * gone when it expires, and never pushed out by tokens of no account (what anyone can ask for).
 */
export function oneTimeTokenStoreContract (harness: OneTimeTokenStoreHarness): ContractCheck[] {
  const fresh = async (): Promise<OneTimeTokenStore> => await harness.create(uniqueNamespace('tokens'))
  const flood = harness.flood ?? 1000
  return [
    {
      name: 'a token is found with its hash and purpose, and consumed once',
      async run () {
        const store = await fresh()
        const [slot, hash] = [random(), random()]
        await store.put(slot, hash, token(), TTL)
        assert.deepEqual(await store.find(slot, hash, 'password_reset'), token())
        assert.deepEqual(await store.find(slot, hash, 'password_reset'), token(), 'find changes nothing')
        assert.deepEqual(await store.consume(slot, hash, 'password_reset'), token())
        assert.equal(await store.consume(slot, hash, 'password_reset'), null, 'a used token is gone')
        assert.equal(await store.find(slot, hash, 'password_reset'), null)
      }
    },
    {
      name: 'of 20 concurrent consumes exactly one gets the token',
      async run () {
        const store = await fresh()
        const [slot, hash] = [random(), random()]
        await store.put(slot, hash, token(), TTL)
        const results = await Promise.all(Array.from({ length: 20 }, async () => await store.consume(slot, hash, 'password_reset')))
        assert.equal(results.filter((result) => result !== null).length, 1)
      }
    },
    {
      name: 'a mismatched hash or another purpose finds nothing and leaves the token alone',
      async run () {
        const store = await fresh()
        const [slot, hash] = [random(), random()]
        await store.put(slot, hash, token(), TTL)
        assert.equal(await store.find(slot, random(), 'password_reset'), null)
        assert.equal(await store.consume(slot, random(), 'password_reset'), null)
        assert.equal(await store.consume(slot, hash, 'verify_email'), null, 'another purpose')
        assert.equal(await store.consume(random(), hash, 'password_reset'), null, 'another slot')
        assert.deepEqual(await store.consume(slot, hash, 'password_reset'), token(), 'still there for the right caller')
      }
    },
    {
      name: 'a new token replaces the one in its slot; other slots keep theirs',
      async run () {
        const store = await fresh()
        const [slot, other, first, second, third] = [random(), random(), random(), random(), random()]
        await store.put(slot, first, token(), TTL)
        await store.put(other, third, token({ accountId: 'account-2' }), TTL)
        await store.put(slot, second, token({ credentialVersion: 4 }), TTL)
        assert.equal(await store.consume(slot, first, 'password_reset'), null, 'the replaced token is dead')
        assert.deepEqual(await store.consume(slot, second, 'password_reset'), token({ credentialVersion: 4 }))
        assert.deepEqual(await store.consume(other, third, 'password_reset'), token({ accountId: 'account-2' }))
      }
    },
    {
      name: 'a pending registration keeps its password hash and fields',
      async run () {
        const store = await fresh()
        const [slot, hash] = [random(), random()]
        const pending = token({ purpose: 'verify_email', accountId: '', credentialVersion: 0, passwordHash: '$argon2id$v=19$m=1024,t=1,p=1$c2FsdA$aGFzaA', fields: { displayName: 'Ada', terms: true } })
        await store.put(slot, hash, pending, TTL)
        assert.deepEqual(await store.find(slot, hash, 'verify_email'), pending)
        assert.deepEqual(await store.consume(slot, hash, 'verify_email'), pending)
      }
    },
    {
      name: 'a token expires after its ttl',
      async run () {
        const store = await fresh()
        const [slot, hash] = [random(), random()]
        await store.put(slot, hash, token(), 1000)
        assert.notEqual(await store.find(slot, hash, 'password_reset'), null)
        await sleep(1200)
        assert.equal(await store.find(slot, hash, 'password_reset'), null)
        assert.equal(await store.consume(slot, hash, 'password_reset'), null)
      }
    },
    {
      name: 'remove (when the store has it) removes a slot\'s token, and no other slot\'s',
      async run () {
        const store = await fresh()
        if (store.remove === undefined) return
        const [slot, other, hash] = [random(), random(), random()]
        await store.put(slot, hash, token(), TTL)
        await store.put(other, hash, token(), TTL)
        await store.remove(slot)
        assert.equal(await store.find(slot, hash, 'password_reset'), null)
        assert.equal(await store.consume(slot, hash, 'password_reset'), null)
        assert.notEqual(await store.find(other, hash, 'password_reset'), null)
        await store.remove(random())
      }
    },
    {
      name: 'removeAll (when the store has it) removes every token of the account, whatever its slot, and no other account\'s',
      async run () {
        const store = await fresh()
        if (store.removeAll === undefined) return
        const [reset, challenge, revert, replaced, theirs, registration, hash] = [random(), random(), random(), random(), random(), random(), random()]
        await store.put(reset, hash, token(), TTL)
        await store.put(challenge, hash, token({ purpose: 'mfa_login' }), 1000)
        await store.put(revert, hash, token({ purpose: 'email_revert', fields: { oldEmail: 'old@example.com' } }), TTL)
        // A slot the account held, now another account's: that one stays.
        await store.put(replaced, hash, token(), TTL)
        await store.put(replaced, hash, token({ accountId: 'account-2' }), TTL)
        await store.put(theirs, hash, token({ accountId: 'account-2' }), TTL)
        await store.put(registration, hash, token({ purpose: 'verify_email', accountId: '', credentialVersion: 0 }), TTL)
        await store.removeAll('account-1')
        assert.equal(await store.find(reset, hash, 'password_reset'), null)
        assert.equal(await store.find(challenge, hash, 'mfa_login'), null)
        assert.equal(await store.consume(revert, hash, 'email_revert'), null)
        assert.deepEqual(await store.find(replaced, hash, 'password_reset'), token({ accountId: 'account-2' }))
        assert.deepEqual(await store.find(theirs, hash, 'password_reset'), token({ accountId: 'account-2' }))
        assert.notEqual(await store.find(registration, hash, 'verify_email'), null, 'a pending registration (no account) stays')
        await store.put(reset, hash, token(), TTL)
        assert.notEqual(await store.find(reset, hash, 'password_reset'), null, 'a token put afterwards is kept')
        await store.removeAll('account-1')
        assert.equal(await store.find(reset, hash, 'password_reset'), null, 'and removed by the next removeAll')
        await store.removeAll('never-seen')
        await store.removeAll('')
        assert.notEqual(await store.find(registration, hash, 'verify_email'), null, 'an empty account id removes nothing')
      }
    },
    {
      name: `tokens of no account never take the place of an account's: after ${flood} sign-in challenges, the account's links and challenges are all there`,
      async run () {
        const store = await fresh()
        const [reset, mfa, revert, hash] = [random(), random(), random(), random()]
        const revertLink = token({ purpose: 'email_revert', fields: { oldEmail: 'old@example.com' } })
        await store.put(reset, hash, token(), TTL)
        await store.put(mfa, hash, token({ purpose: 'mfa_login' }), TTL)
        await store.put(revert, hash, revertLink, TTL)
        const challenge = token({ purpose: 'passkey_login', accountId: '', email: '', credentialVersion: 0 })
        // In batches, as concurrent requests would; a bounded store may refuse some (a 503), never drop an account's token.
        for (let i = 0; i < flood; i += 50) {
          await Promise.allSettled(Array.from({ length: Math.min(50, flood - i) }, async () => { await store.put(random(), random(), challenge, TTL) }))
        }
        assert.deepEqual(await store.find(reset, hash, 'password_reset'), token(), 'the reset link')
        assert.deepEqual(await store.find(mfa, hash, 'mfa_login'), token({ purpose: 'mfa_login' }), 'the mfaToken')
        assert.deepEqual(await store.consume(revert, hash, 'email_revert'), revertLink, 'the revert link')
        const [last, lastHash] = [random(), random()]
        // A store that makes room keeps a new one; a store that refuses when full may refuse it.
        const stored = await store.put(last, lastHash, challenge, TTL).then(() => true, () => false)
        if (stored) assert.deepEqual(await store.consume(last, lastHash, 'passkey_login'), challenge, 'a challenge put is kept')
      }
    },
    {
      name: 'consumeFirst (when the store has it) takes the account\'s earliest token of a purpose, and every other of that account and purpose with it',
      async run () {
        const store = await fresh()
        if (store.consumeFirst === undefined) return
        const revert = (email: string, accountId = 'account-1'): OneTimeToken => token({ purpose: 'email_revert', accountId, fields: { oldEmail: email } })
        const [first, second, third, reset, theirs, hash] = [random(), random(), random(), random(), random(), random()]
        await store.put(first, hash, revert('a@example.com'), TTL)
        await sleep(20)
        await store.put(second, hash, revert('b@example.com'), TTL)
        await sleep(20)
        await store.put(third, hash, revert('c@example.com'), TTL)
        await store.put(reset, hash, token(), TTL)
        await store.put(theirs, hash, revert('a@example.com', 'account-2'), TTL)
        assert.equal(await store.consumeFirst(second, hash, 'email_revert'), null, 'a later token while an earlier one lives')
        assert.equal(await store.consumeFirst(first, random(), 'email_revert'), null, 'a mismatched hash')
        assert.equal(await store.consumeFirst(first, hash, 'password_reset'), null, 'another purpose')
        assert.notEqual(await store.find(second, hash, 'email_revert'), null, 'refusals change nothing')
        assert.deepEqual(await store.consumeFirst(first, hash, 'email_revert'), revert('a@example.com'))
        assert.equal(await store.find(second, hash, 'email_revert'), null, 'the others of the account and purpose went with it')
        assert.equal(await store.consumeFirst(third, hash, 'email_revert'), null)
        assert.equal(await store.consumeFirst(first, hash, 'email_revert'), null, 'and the token itself')
        assert.notEqual(await store.find(reset, hash, 'password_reset'), null, 'another purpose of the account stays')
        assert.deepEqual(await store.consumeFirst(theirs, hash, 'email_revert'), revert('a@example.com', 'account-2'), 'another account\'s stays')
        const [pending, expired, later] = [random(), random(), random()]
        await store.put(pending, hash, token({ purpose: 'verify_email', accountId: '', credentialVersion: 0 }), TTL)
        assert.equal(await store.consumeFirst(pending, hash, 'verify_email'), null, 'a token of no account')
        await store.put(expired, hash, revert('a@example.com'), 1000)
        await store.put(later, hash, revert('b@example.com'), TTL)
        await sleep(1200)
        assert.deepEqual(await store.consumeFirst(later, hash, 'email_revert'), revert('b@example.com'), 'an expired earlier token is no obstacle')
      }
    },
    {
      name: 'of 20 concurrent consumeFirst calls on 4 tokens of one account and purpose, exactly one gets a token',
      async run () {
        const store = await fresh()
        if (store.consumeFirst === undefined) return
        const hash = random()
        const slots = [random(), random(), random(), random()]
        // Put at once: the same expiry to the millisecond or close to it, so no token waits for another.
        await Promise.all(slots.map(async (slot, i) => { await store.put(slot, hash, token({ purpose: 'email_revert', fields: { oldEmail: `${i}@example.com` } }), TTL) }))
        const results = await Promise.all(Array.from({ length: 20 }, async (_, i) => await store.consumeFirst!(slots[i % slots.length]!, hash, 'email_revert')))
        assert.equal(results.filter((result) => result !== null).length, 1)
        for (const slot of slots) assert.equal(await store.find(slot, hash, 'email_revert'), null, 'none is left')
      }
    },
    {
      name: 'list (when the store has it) gives the account\'s live tokens of a purpose, and no other',
      async run () {
        const store = await fresh()
        if (store.list === undefined) return
        const hash = random()
        const left = (email: string, accountId = 'account-1'): OneTimeToken => token({ purpose: 'email_left', accountId, email })
        await store.put(random(), hash, left('a@example.com'), TTL)
        await store.put(random(), hash, left('b@example.com'), TTL)
        await store.put(random(), hash, left('gone@example.com'), 1000)
        await store.put(random(), hash, left('c@example.com', 'account-2'), TTL)
        await store.put(random(), hash, token(), TTL)
        await sleep(1200)
        const listed = await store.list('account-1', 'email_left')
        assert.deepEqual(listed.map(({ email }) => email).sort(), ['a@example.com', 'b@example.com'])
        assert.deepEqual(listed.find(({ email }) => email === 'a@example.com'), left('a@example.com'))
        assert.deepEqual(await store.list('account-3', 'email_left'), [])
        assert.deepEqual(await store.list('', 'verify_email'), [])
      }
    }
  ]
}
