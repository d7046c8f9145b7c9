import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { StoreCall } from '../stores/store-call.js'
import type { KeyRing } from '../tokens/key-ring.js'
import type { AttemptOutcome, AttemptStore, ThrottlePolicy } from '../stores/types.js'
import { forgetCounter, settleSuccess } from './counted.js'
import { accountGroup, COUNTER_KEYS } from './counter-keys.js'
import type { KnownDevice } from './known-devices.js'
import { reserveOnEvery, retryAfterSeconds } from './reserve-attempt.js'

/** A reserved password attempt; settle it exactly once. */
export interface Attempt {
  /** Resolves the milliseconds of the block this failure started (0 when it started none). */
  settle (outcome: AttemptOutcome): Promise<number>
  /**
   * performance.now() time by which the verification must start: half the lease after the reservation,
   * leaving the other half for the verification itself (every accepted format takes well under a second).
   */
  startBy: number
}

/**
 * Throttling of password verifications (Login, ChangePassword and Reauthenticate share it), per e-mail,
 * or per known device when the request proved one for that e-mail (contract §6). E-mail keys are HMACs
 * of the normalised address with a key derived from the signing key, so stores hold no addresses, a list
 * of candidate addresses cannot reverse them, and unknown ones count like known ones. While several keys
 * are configured (a rotation), an e-mail is counted under each of them (contract §5). Device keys are in the
 * account's group, so account deletion forgets them (COUNTER_KEYS in throttle/counter-keys.ts).
 */
export class AttemptThrottle {
  readonly policy: Readonly<ThrottlePolicy>
  readonly #store: AttemptStore
  readonly #storeCall: StoreCall

  readonly #keyMacs: readonly Buffer[]

  constructor (store: AttemptStore, policy: ThrottlePolicy, storeCall: StoreCall, keyRing: KeyRing) {
    this.#store = store
    this.#keyMacs = keyRing.derive('attempt-key').all.map(({ key }) => key)
    this.#storeCall = storeCall
    this.policy = Object.freeze({ ...policy })
  }

  /**
   * Reserves an attempt on the device's counter if `device` is given, else on the e-mail's, or tells
   * how many seconds that counter is blocked for (503 if the store fails).
   */
  async begin (request: FastifyRequest, email: string, device: KnownDevice | null): Promise<Attempt | { retryAfter: number }> {
    const keys = device === null ? this.#emailKeys(email) : [COUNTER_KEYS.device(device.accountId, device.id)]
    const reservedAt = performance.now()
    const attempt = await reserveOnEvery(this.#store, this.#storeCall, request.log, keys, this.policy)
    if (!('settle' in attempt)) return { retryAfter: retryAfterSeconds(attempt.retryAfterMs) }
    return { settle: attempt.settle, startBy: reservedAt + this.policy.leaseMs / 2 }
  }

  /** Forgets the e-mail's failures and lifts its block, as a successful login does (after a password reset). */
  async reset (request: FastifyRequest, email: string): Promise<void> {
    await Promise.all(this.#emailKeys(email).map(async (key) => { await settleSuccess(this.#store, this.#storeCall, request.log, key, this.policy) }))
  }

  /**
   * Forgets the e-mail's counter altogether, under every configured key: failures, block and open reservations (an
   * admin's unblock, account deletion). A store without clear() gets a success, which lifts the block and forgets the failures.
   */
  async forget (caller: { log: FastifyBaseLogger }, email: string): Promise<void> {
    for (const key of this.#emailKeys(email)) await forgetCounter(this.#store, this.#storeCall, caller.log, key, this.policy)
  }

  /**
   * Forgets the account's own counters (its known devices', for passwords and codes) where the store can
   * (clearGroup); a store without it leaves them to expire (forgetAfterMs).
   */
  async forgetAccount (caller: { log: FastifyBaseLogger }, accountId: string): Promise<void> {
    const store = this.#store
    if (store.clearGroup === undefined) return
    await this.#storeCall(caller.log, 'attempts.clearGroup', async () => { await store.clearGroup!(accountGroup(accountId)) })
  }

  /** The e-mail's counter under each configured key (one, unless a rotation is under way): see reserveOnEvery. */
  #emailKeys (email: string): string[] {
    return this.#keyMacs.map((keyMac) => COUNTER_KEYS.email(keyMac, email))
  }
}
