import { availableParallelism } from 'node:os'
import type { Argon2Params } from './argon2-options.js'
import type { HashingOptions } from './options.js'

/** argon2 time per KiB and pass, on the generous side: measured 0.25–0.5 µs on one current x86 core. */
const ARGON2_MS_PER_KIB_PASS = 0.001

/**
 * How long an unsettled reservation counts. It covers the longest attempt the plugin still waits for:
 * the reserve's answer, the account lookup and the settle (storeTimeout each; past that the plugin gives
 * up and cancels), and the verification, including a full hashing queue, which drains in
 * maxQueue / threads rounds of one argon2 run each (slower when more threads run than there are
 * cores). Defaults: 3 × 2 s + 33 × 39 ms ≈ 7.3 s.
 */
export function attemptLeaseMs ({ storeTimeout, argon2, hashing }: { storeTimeout: number, argon2: Argon2Params, hashing: Required<HashingOptions> }): number {
  const contention = Math.max(1, hashing.threads / availableParallelism())
  const hashMs = argon2.memoryCost * argon2.timeCost * ARGON2_MS_PER_KIB_PASS * contention
  const rounds = Math.ceil(hashing.maxQueue / hashing.threads) + 1
  return Math.ceil(3 * storeTimeout + rounds * hashMs)
}
