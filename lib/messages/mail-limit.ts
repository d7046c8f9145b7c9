import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptStore, ThrottlePolicy } from '../stores/types.js'
import type { KeyRing } from '../tokens/key-ring.js'
import { COUNTER_KEYS } from '../throttle/counter-keys.js'
import { reserveOnEvery } from '../throttle/reserve-attempt.js'
import { MESSAGE_TYPES, type PasswordAuthMessage } from './outbox.js'

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/**
 * At most `count` messages per sliding `windowMs`, as attempt arithmetic (stores/attempt-rules.ts): each
 * message is one failure; the `count`-th starts a block of one window, and each one after it another, so
 * past the budget messages are a window apart; the count is forgotten only after a quiet window. No window
 * of that length ever holds more than `count` of them, wherever a clock hour begins.
 */
function budget (count: number, windowMs: number): ThrottlePolicy {
  return Object.freeze({ freeFailures: count, blockMs: windowMs, maxBlockMs: windowMs, forgetAfterMs: windowMs, leaseMs: 10_000 })
}

/** Types whose budget is fixed, whatever `mailLimit` says (contract §13, §15). */
const FIXED_BUDGETS: Partial<Record<PasswordAuthMessage['type'], ThrottlePolicy>> = {
  // The owner of a taken address hears of a sign-up attempt once an hour: sign-ups cannot flood the mailbox.
  account_exists: budget(1, HOUR_MS),
  // Someone has the password and got a code wrong: the owner hears it once a day.
  mfa_code_failed: budget(1, DAY_MS)
}

/**
 * The per-address budgets of the messages a request can ask for (contract §13): `limit` per address, message
 * type and sliding hour, counted in the attempt store (COUNTER_KEYS.mail). A budget per
 * type, so a flood of one kind (sign-ups of a taken address) never starves another (its reset link).
 */
export class MailLimit {
  readonly #store: AttemptStore
  readonly #storeCall: StoreCall
  readonly #keyMacs: readonly Buffer[]
  readonly #policy: ThrottlePolicy

  constructor (store: AttemptStore, limit: number, storeCall: StoreCall, keyRing: KeyRing) {
    this.#store = store
    this.#storeCall = storeCall
    this.#keyMacs = keyRing.derive('attempt-key').all.map(({ key }) => key)
    this.#policy = budget(limit, HOUR_MS)
  }

  /** Counts one message of `type` to `email`; false (nothing counted) when that budget is spent. */
  async take (request: FastifyRequest, email: string, type: PasswordAuthMessage['type']): Promise<boolean> {
    // Counted under every configured key while a rotation keeps several, so a rotation lifts no budget.
    const keys = this.#keys(email, type)
    const message = await reserveOnEvery(this.#store, this.#storeCall, request.log, keys, FIXED_BUDGETS[type] ?? this.#policy)
    if (!('settle' in message)) return false
    await message.settle('failure')
    return true
  }

  /** Forgets every message budget of the address (account deletion); needs an attempt store with clear(). */
  async forget (caller: { log: FastifyBaseLogger }, email: string): Promise<void> {
    const store = this.#store
    if (store.clear === undefined) return
    for (const type of MESSAGE_TYPES) {
      for (const key of this.#keys(email, type)) await this.#storeCall(caller.log, 'attempts.clear', async () => { await store.clear!(key) })
    }
  }

  /** The budget's key under each configured key (one, unless a rotation is under way). */
  #keys (email: string, type: PasswordAuthMessage['type']): string[] {
    return this.#keyMacs.map((keyMac) => COUNTER_KEYS.mail(keyMac, type, email))
  }
}
