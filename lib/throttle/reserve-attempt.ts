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

/**
 * One attempt reserved on every key of `keys` (the same counter under each configured signing key, while a
 * rotation keeps several): granted only if every key grants it, so a counter the older instances fill still
 * judges the newer ones, and each attempt counts once on each key, never twice on one. A refusal or a store
 * failure cancels what the other keys granted. Settling settles every key and resolves the longest block.
 */
export async function reserveOnEvery (store: AttemptStore, storeCall: StoreCall, log: FastifyBaseLogger, keys: readonly string[], policy: ThrottlePolicy):
Promise<ReservedAttempt | { retryAfterMs: number }> {
  if (keys.length === 1) return await reserveAttempt(store, storeCall, log, keys[0]!, policy)
  const results = await Promise.allSettled(keys.map(async (key) => await reserveAttempt(store, storeCall, log, key, policy)))
  const granted = results.flatMap((result) => result.status === 'fulfilled' && 'settle' in result.value ? [result.value] : [])
  if (granted.length < keys.length) {
    await Promise.all(granted.map(async (attempt) => await attempt.settle('cancel').catch(() => 0)))
    const failed = results.find((result) => result.status === 'rejected')
    if (failed !== undefined) throw failed.reason
    const refusals = results.map((result) => result.status === 'fulfilled' && 'retryAfterMs' in result.value ? result.value.retryAfterMs : 0)
    return { retryAfterMs: Math.max(...refusals) }
  }
  return { settle: async (outcome) => Math.max(...await Promise.all(granted.map(async (attempt) => await attempt.settle(outcome)))) }
}

/**
 * One attempt on several counters reserved one after the other (a code's counter, then its lock): the first
 * refusal, or failure, cancels what the earlier ones granted and is the answer. Settling settles every counter
 * and resolves the longest block.
 */
export async function reserveInTurn (reserves: ReadonlyArray<() => Promise<ReservedAttempt | { retryAfterMs: number }>>):
Promise<ReservedAttempt | { retryAfterMs: number }> {
  const granted: ReservedAttempt[] = []
  const cancelGranted = async (): Promise<void> => { await Promise.all(granted.map(async (attempt) => await attempt.settle('cancel'))).catch(() => {}) }
  for (const reserve of reserves) {
    let attempt
    try {
      attempt = await reserve()
    } catch (err) {
      await cancelGranted()
      throw err
    }
    if (!('settle' in attempt)) {
      await cancelGranted()
      return attempt
    }
    granted.push(attempt)
  }
  return { settle: async (outcome) => Math.max(...await Promise.all(granted.map(async (attempt) => await attempt.settle(outcome)))) }
}
