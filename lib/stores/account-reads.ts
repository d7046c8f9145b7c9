import type { FastifyBaseLogger } from 'fastify'
import { accountByIdAtOnce } from './at-once.js'
import { callAtOnce, type StoreCall } from './store-call.js'
import type { AccountStore, PasswordAuthAccount, StoredAccount } from './types.js'

/** Who asks: a request, or the host (admin, the session API) with the plugin's log. */
export interface Caller { log: FastifyBaseLogger }

/**
 * The one door for reading the account store, on a floor every room can import: the guard, sessions, the
 * credential check, known devices and passkeys read accounts through it, and so does account/service.ts, the
 * only code that writes the store. Every read fails closed through storeCall (503).
 */
export class AccountReads {
  readonly #store: AccountStore
  readonly #storeCall: StoreCall

  constructor (store: AccountStore, storeCall: StoreCall) {
    this.#store = store
    this.#storeCall = storeCall
  }

  byId (caller: Caller, id: string): Promise<PasswordAuthAccount | null> {
    return this.#storeCall(caller.log, 'accounts.findById', () => this.#store.findById(id))
  }

  /**
   * The read by id in the same turn, when the store answers at once (the memory store: at-once.ts); a throw
   * becomes the 503 as in byId. `undefined` (never an answer of the store's) when the store needs a call: use byId.
   */
  byIdAtOnce (caller: Caller, id: string): PasswordAuthAccount | null | undefined {
    const findById = accountByIdAtOnce(this.#store)
    return findById === undefined ? undefined : callAtOnce(caller.log, 'accounts.findById', () => findById(id))
  }

  byEmail (caller: Caller, email: string): Promise<StoredAccount | null> {
    return this.#storeCall(caller.log, 'accounts.findByEmail', () => this.#store.findByEmail(email))
  }

  /**
   * The bare read by id, only for running beside another store's call inside one storeCall the caller makes
   * (Logout: one deadline and one promise layer for both); that call's operation names `accounts.findById`.
   */
  byIdInsideStoreCall (id: string): Promise<PasswordAuthAccount | null> {
    return this.#store.findById(id)
  }
}
