import { accountAccepts } from '../session/account-rule.js'
import { AccountReads, type Caller } from '../stores/account-reads.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AccountStore, EmailUpdate, NewAccountRecord, OneTimeToken, PasswordAuthAccount, StoredAccount } from '../stores/types.js'

export type { Caller }

/** What a compare-and-set of the hash that keeps racing a password change comes to. */
export type HashReplacement = 'replaced' | 'gone' | 'raced'

/** A compare-and-set of the hash that a racing password change outran is tried again on the fresh hash, this often in all. */
const CAS_TRIES = 5

/**
 * The account store as the rooms above it use it: the routes' and the admin API's door to it, and the only code that
 * writes it. Every call fails closed through storeCall (503). It reads through `reads`, the door the rooms below use
 * too (stores/account-reads.ts), with the same rule (session/account-rule.ts); plugin.ts hands both the same one.
 */
export class AccountService {
  readonly #store: AccountStore
  readonly #storeCall: StoreCall
  readonly #reads: AccountReads

  constructor (store: AccountStore, storeCall: StoreCall, reads = new AccountReads(store, storeCall)) {
    this.#store = store
    this.#storeCall = storeCall
    this.#reads = reads
  }

  async findById (caller: Caller, id: string): Promise<PasswordAuthAccount | null> {
    return await this.#reads.byId(caller, id)
  }

  async findByEmail (caller: Caller, email: string): Promise<StoredAccount | null> {
    return await this.#reads.byEmail(caller, email)
  }

  /** The account with its hash, by id (found by its address, which must still name it). */
  async stored (caller: Caller, id: string): Promise<StoredAccount | null> {
    const account = await this.findById(caller, id)
    if (account === null) return null
    const stored = await this.findByEmail(caller, account.email)
    return stored?.id === id ? stored : null
  }

  /**
   * The account a live one-time token still stands for (session/account-rule.ts: same account, active, same
   * credential version; `boundToAddress`: a link still at the address it went to), or null.
   */
  async ofToken (caller: Caller, token: OneTimeToken, { boundToAddress = false } = {}): Promise<PasswordAuthAccount | null> {
    const account = await this.findById(caller, token.accountId)
    return accountAccepts(account, token.credentialVersion, { accountId: token.accountId, email: boundToAddress ? token.email : undefined }) ? account : null
  }

  /** As ofToken for a link bound to its address, read by that address, with the hash a compare-and-set needs. */
  async storedOfToken (caller: Caller, token: OneTimeToken): Promise<StoredAccount | null> {
    const account = await this.findByEmail(caller, token.email)
    return accountAccepts(account, token.credentialVersion, { accountId: token.accountId, email: token.email }) ? account : null
  }

  /** A verified registration's account, or null if the address was taken meanwhile. */
  async create (caller: Caller, record: NewAccountRecord): Promise<StoredAccount | null> {
    return await this.#storeCall(caller.log, 'accounts.create', async () => await this.#store.create!(record))
  }

  /** Moves the account to a new address if it still has the expected one and credential version (a compare-and-set). */
  async moveEmail (caller: Caller, change: EmailUpdate): Promise<boolean> {
    return await this.#storeCall(caller.log, 'accounts.updateEmail', async () => await this.#store.updateEmail!(change))
  }

  /** Removes the account; false if it was gone already. */
  async delete (caller: Caller, id: string): Promise<boolean> {
    return await this.#storeCall(caller.log, 'accounts.delete', async () => await this.#store.delete!(id))
  }

  /**
   * Replaces the hash the account was read with, once: for a proof made against that hash (the current password, a
   * reset link), which a racing password change must outrun. False if it did. `advanceCredentialVersion` is false
   * only for a rehash of the same password.
   */
  async setPasswordHash (caller: Caller, account: StoredAccount, newHash: string, advanceCredentialVersion = true): Promise<boolean> {
    return await this.#storeCall(caller.log, 'accounts.updatePasswordHash', () => this.#store.updatePasswordHash({
      id: account.id, expectedHash: account.passwordHash, newHash, advanceCredentialVersion
    }))
  }

  /**
   * The one retry rule, for an act that stands whatever the hash is (an admin's reset mark, a revert's new password):
   * a compare-and-set that advances the credential version, and on a racing password change reads the account again
   * and tries on the fresh hash, CAS_TRIES times in all. `gone`: the account is no more, or no longer `still` what
   * the act was for; `raced`: every try lost.
   */
  async replacePasswordHash (caller: Caller, account: StoredAccount, newHashOf: (current: StoredAccount) => string,
    still: (current: StoredAccount) => boolean = () => true): Promise<HashReplacement> {
    for (let tries = 0; tries < CAS_TRIES; tries++) {
      const current = tries === 0 ? account : await this.stored(caller, account.id)
      if (current === null || (tries > 0 && !still(current))) return 'gone'
      if (await this.setPasswordHash(caller, current, newHashOf(current))) return 'replaced'
    }
    return 'raced'
  }
}
