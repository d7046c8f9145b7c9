import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { StoreCall } from './store-call.js'
import type { AttemptOutcome, AttemptStore, ThrottlePolicy } from './stores/types.js'

/** A reserved password attempt; settle it exactly once. */
export interface Attempt {
  settle (outcome: AttemptOutcome): Promise<void>
}

/**
 * Per-e-mail throttling of password verifications (Login and ChangePassword share it). Keys are hashes
 * of the normalised address, so stores hold no addresses and unknown ones count like known ones.
 */
export class EmailThrottle {
  readonly policy: Readonly<ThrottlePolicy>
  readonly #store: AttemptStore
  readonly #storeCall: StoreCall

  constructor (store: AttemptStore, policy: ThrottlePolicy, storeCall: StoreCall) {
    this.#store = store
    this.#storeCall = storeCall
    this.policy = Object.freeze({ ...policy })
  }

  /** Reserves an attempt, or tells how many seconds the address is blocked for (503 if the store fails). */
  async begin (request: FastifyRequest, email: string): Promise<Attempt | { retryAfter: number }> {
    const key = createHash('sha256').update(email).digest('base64url')
    const reservation = await this.#storeCall(request, 'attempts.reserve', async () => await this.#store.reserve(key, this.policy))
    if (!reservation.granted) return { retryAfter: Math.max(1, Math.ceil(reservation.retryAfterMs / 1000)) }
    const { ticket } = reservation
    return {
      settle: async (outcome) => {
        await this.#storeCall(request, 'attempts.settle', async () => { await this.#store.settle(key, ticket, outcome, this.policy) })
      }
    }
  }
}
