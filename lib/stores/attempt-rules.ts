import type { AttemptOutcome, Reservation, ThrottlePolicy } from './types.js'

/**
 * The throttle's arithmetic, for stores that run it in JavaScript. RedisAttemptStore's Lua scripts
 * mirror these functions line for line: change both together (test/integration/throttle/throttle-rules.test.ts compares them).
 */

/** What an attempt store keeps per key, besides the open reservations. */
export interface AttemptCounts {
  /** Consecutive failures. */
  failures: number
  /** Epoch ms the block ends at (in the past, or 0, when not blocked). */
  blockedUntil: number
  /** Epoch ms from which the failures are forgotten. */
  forgetAt: number
}

export const NO_COUNTS: Readonly<AttemptCounts> = Object.freeze({ failures: 0, blockedUntil: 0, forgetAt: 0 })

/** How long a key is blocked after its `failures`-th consecutive failure (0 while failures are free). */
export function blockDuration (failures: number, policy: ThrottlePolicy): number {
  if (failures < policy.freeFailures) return 0
  const doublings = failures - policy.freeFailures
  return doublings >= 31 ? policy.maxBlockMs : Math.min(policy.blockMs * 2 ** doublings, policy.maxBlockMs)
}

/** The wait suggested while other attempts of a key are still being verified. */
export function inFlightRetryMs (policy: ThrottlePolicy): number {
  return Math.min(1000, policy.leaseMs)
}

/** The failures that still count at `now`: none once they are forgotten. */
export function liveFailures (counts: AttemptCounts, now: number): number {
  return counts.failures > 0 && now >= counts.forgetAt ? 0 : counts.failures
}

/**
 * Whether one more attempt may start while `open` reservations are in flight: not while blocked, and
 * only as many at once as free failures are left (at least one, so a key is never stuck).
 */
export function admit (counts: AttemptCounts, open: number, now: number, policy: ThrottlePolicy): Reservation {
  if (counts.blockedUntil > now) return { granted: false, retryAfterMs: counts.blockedUntil - now }
  if (open >= Math.max(1, policy.freeFailures - liveFailures(counts, now))) return { granted: false, retryAfterMs: inFlightRetryMs(policy) }
  return { granted: true }
}

/** The counts after an attempt settled with `outcome`. */
export function afterOutcome (counts: AttemptCounts, outcome: AttemptOutcome, now: number, policy: ThrottlePolicy): AttemptCounts {
  if (outcome === 'success') return NO_COUNTS
  if (outcome === 'cancel') return counts
  const failures = liveFailures(counts, now) + 1
  const block = blockDuration(failures, policy)
  const blockedUntil = block > 0 ? now + block : counts.blockedUntil
  return { failures, blockedUntil, forgetAt: Math.max(blockedUntil, now) + policy.forgetAfterMs }
}
