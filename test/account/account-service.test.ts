import { pino } from 'pino'
import t from 'tap'
import { AccountService } from '../../lib/account/service.js'
import { MemoryAccountStore } from '../../lib/index.js'
import { createStoreCall } from '../../lib/stores/store-call.js'
import type { OneTimeToken } from '../../lib/stores/types.js'

// The account service's own rules, apart from the routes that use them: the token rule and the one retry rule.
const caller = { log: pino({ level: 'silent' }) }

function service (): { store: MemoryAccountStore, accounts: AccountService, ada: { id: string, passwordHash: string } } {
  const store = new MemoryAccountStore()
  const ada = store.add({ email: 'ada@example.com', passwordHash: 'hash-0' })
  return { store, accounts: new AccountService(store, createStoreCall(1000)), ada }
}

const tokenOf = (fields: Partial<OneTimeToken> & { accountId: string }): OneTimeToken =>
  ({ purpose: 'password_reset', email: 'ada@example.com', credentialVersion: 0, ...fields })

t.test('a one-time token stands for its account only while it is the same account, active, at the same version and (a link) address', async (t) => {
  const { store, accounts, ada } = service()
  t.equal((await accounts.ofToken(caller, tokenOf({ accountId: ada.id })))?.id, ada.id)
  t.equal((await accounts.storedOfToken(caller, tokenOf({ accountId: ada.id })))?.passwordHash, 'hash-0', 'by its address, with the hash')
  t.equal(await accounts.ofToken(caller, tokenOf({ accountId: ada.id, credentialVersion: 1 })), null, 'another credential version')
  t.equal(await accounts.storedOfToken(caller, tokenOf({ accountId: 'someone-else' })), null, 'the address names another account')
  t.equal(await accounts.ofToken(caller, tokenOf({ accountId: ada.id, email: 'old@example.com' }), { boundToAddress: true }), null, 'a link whose address moved')
  t.equal((await accounts.ofToken(caller, tokenOf({ accountId: ada.id, email: 'old@example.com' })))?.id, ada.id, 'a challenge is not bound to the address')
  store.setActive(ada.id, false)
  t.equal(await accounts.ofToken(caller, tokenOf({ accountId: ada.id, credentialVersion: (await store.findById(ada.id))!.credentialVersion })), null, 'inactive')
})

t.test('the compare-and-set of the hash: once for a proof, retried on the fresh hash for an act, at most 5 tries', async (t) => {
  const { store, accounts } = service()
  const stale = { ...(await store.findByEmail('ada@example.com'))! }
  t.equal(await accounts.setPasswordHash(caller, stale, 'hash-1'), true)
  t.equal(await accounts.setPasswordHash(caller, stale, 'hash-2'), false, 'a proof made against an older hash is outrun')
  t.equal(await accounts.replacePasswordHash(caller, stale, (current) => `${current.passwordHash}!`), 'replaced', 'an act tries again on the fresh hash')
  t.equal((await store.findByEmail('ada@example.com'))!.passwordHash, 'hash-1!')

  let tries = 0
  const racing = new AccountService({
    findByEmail: async (email) => await store.findByEmail(email),
    findById: async (id) => await store.findById(id),
    updatePasswordHash: async () => { tries++; return false }
  }, createStoreCall(1000))
  t.equal(await racing.replacePasswordHash(caller, stale, () => 'never'), 'raced')
  t.equal(tries, 5, 'five tries in all')
  t.equal(await racing.replacePasswordHash(caller, stale, () => 'never', () => false), 'gone', 'no retry once the account is no longer what the act was for')
  t.equal(await accounts.replacePasswordHash(caller, { ...stale, id: 'gone' }, () => 'x'), 'gone', 'an account that is no more')
})
