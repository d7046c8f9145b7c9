import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptOutcome, AttemptStore, ThrottlePolicy } from '../stores/types.js'

/** An attempt that holds a slot on its key; settle it exactly once. */
export interface ReservedAttempt {
  /** Resolves the milliseconds of the block this failure started (0 when it started none). */
  settle (outcome: AttemptOutcome): Promise<number>
}

/**
 * Reserves an attempt on `key` under a ticket of its own, or resolves how long the key refuses attempts.
 * Every counter of the plugin goes through here: passwords per e-mail and per device, second-factor codes
 * per account and per challenge, messages per address. When the reserve fails or times out (503), the ticket
 * is cancelled in the background: a store may still run the reserve after we gave up (a frozen Redis runs
 * its queue when it wakes), and a late reservation must not keep its slot.
 */
export async function reserveAttempt (store: AttemptStore, storeCall: StoreCall, log: FastifyBaseLogger, key: string, policy: ThrottlePolicy):
Promise<ReservedAttempt | { retryAfterMs: number }> {
  const ticket = randomUUID()
  const settle = async (outcome: AttemptOutcome): Promise<number> => {
    const blockMs = await storeCall(log, 'attempts.settle', () => store.settle(key, ticket, outcome, policy))
    // A store written before settle told the block resolves nothing: no block is reported then.
    return typeof blockMs === 'number' ? blockMs : 0
  }
  let reservation
  try {
    reservation = await storeCall(log, 'attempts.reserve', () => store.reserve(key, ticket, policy))
  } catch (err) {
    settle('cancel').catch(() => {})
    throw err
  }
  return reservation.granted ? { settle } : { retryAfterMs: reservation.retryAfterMs }
}

/** Whole seconds to tell a client to wait, at least 1. */
export function retryAfterSeconds (retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000))
}
