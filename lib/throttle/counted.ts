import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptOutcome, AttemptStore, ThrottlePolicy } from '../stores/types.js'
import type { ReservedAttempt } from './reserve-attempt.js'

/**
 * The one bracket around a counter (AttemptStore: reserve, then settle exactly once): an attempt is reserved, `run`
 * is what it counts, and the attempt is settled with the outcome `outcomeOf` gives the result. A refused reservation
 * runs nothing. When `run` throws, the attempt was undecided (a store down, hashing at capacity): it is cancelled and
 * counts neither way. Resolves the result and the block its settle started (ms, 0 for none).
 */
export async function runCounted<S extends object, T> (
  reserve: () => Promise<S>, run: (attempt: Extract<S, ReservedAttempt>) => Promise<T>, outcomeOf: (result: T) => AttemptOutcome
): Promise<{ refused: Exclude<S, ReservedAttempt> } | { result: T, blockMs: number }> {
  const reserved = await reserve()
  if (!('settle' in reserved)) return { refused: reserved as Exclude<S, ReservedAttempt> }
  const attempt = reserved as Extract<S, ReservedAttempt>
  let result: T
  try {
    result = await run(attempt)
  } catch (err) {
    await attempt.settle('cancel').catch(() => {})
    throw err
  }
  return { result, blockMs: await attempt.settle(outcomeOf(result)) }
}

/** A check's outcome as its attempt counts it: a rejection a failure, an acceptance a success, anything else undecided. */
export function outcomeOfCheck ({ outcome }: { outcome: string }): AttemptOutcome {
  return outcome === 'rejected' ? 'failure' : outcome === 'accepted' ? 'success' : 'cancel'
}

/** A success outside any attempt: lifts the counter's block and forgets its failures (a password reset does). */
export async function settleSuccess (store: AttemptStore, storeCall: StoreCall, log: FastifyBaseLogger, key: string, policy: ThrottlePolicy): Promise<void> {
  await storeCall(log, 'attempts.settle', () => store.settle(key, randomUUID(), 'success', policy))
}

/**
 * Forgets a counter altogether, where the store has clear(): its failures, its block and its open reservations (an
 * admin's unblock, account deletion). A store without clear() gets a success, which lifts the block and forgets the failures.
 */
export async function forgetCounter (store: AttemptStore, storeCall: StoreCall, log: FastifyBaseLogger, key: string, policy: ThrottlePolicy): Promise<void> {
  await storeCall(log, 'attempts.clear', async () => {
    if (store.clear !== undefined) await store.clear(key)
    else await store.settle(key, randomUUID(), 'success', policy)
  })
}
