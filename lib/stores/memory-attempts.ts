import type { AttemptOutcome, AttemptStore, Reservation, ThrottlePolicy } from './types.js'

interface KeyState {
  failures: number
  blockedUntil: number
  /** Failures are forgotten from this time on. */
  forgetAt: number
  /** Open reservations: ticket → lease end. */
  leases: Map<string, number>
}

const SWEEP_INTERVAL_MS = 60_000

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

/**
 * Attempt counters in process memory, for a single instance. At most `maxKeys` keys are held: expired
 * ones are swept, and past the bound the oldest are dropped (each such key starts counting afresh).
 */
export class MemoryAttemptStore implements AttemptStore {
  readonly #states = new Map<string, KeyState>()
  readonly #maxKeys: number
  #nextTicket = 0
  #nextSweep = 0

  constructor ({ maxKeys = 100_000 }: { maxKeys?: number } = {}) {
    this.#maxKeys = maxKeys
  }

  async reserve (key: string, policy: ThrottlePolicy): Promise<Reservation> {
    const now = Date.now()
    if (now >= this.#nextSweep) this.#sweep(now)

    let state = this.#states.get(key)
    if (state === undefined) {
      state = { failures: 0, blockedUntil: 0, forgetAt: 0, leases: new Map() }
      this.#insert(key, state)
    } else {
      dropExpiredLeases(state, now)
      if (state.failures > 0 && now >= state.forgetAt) state.failures = 0
      if (state.blockedUntil > now) return { granted: false, retryAfterMs: state.blockedUntil - now }
      const slots = Math.max(1, policy.freeFailures - state.failures)
      if (state.leases.size >= slots) return { granted: false, retryAfterMs: inFlightRetryMs(policy) }
    }
    const ticket = String(++this.#nextTicket)
    state.leases.set(ticket, now + policy.leaseMs)
    return { granted: true, ticket }
  }

  async settle (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy): Promise<void> {
    let state = this.#states.get(key)
    if (state === undefined) {
      // Swept while the attempt ran past its lease: a failure still counts.
      if (outcome !== 'failure') return
      state = { failures: 0, blockedUntil: 0, forgetAt: 0, leases: new Map() }
      this.#insert(key, state)
    }
    state.leases.delete(ticket)
    const now = Date.now()
    if (outcome === 'success') {
      state.failures = 0
      state.blockedUntil = 0
    } else if (outcome === 'failure') {
      if (state.failures > 0 && now >= state.forgetAt) state.failures = 0
      state.failures++
      const block = blockDuration(state.failures, policy)
      if (block > 0) state.blockedUntil = now + block
      state.forgetAt = Math.max(state.blockedUntil, now) + policy.forgetAfterMs
    }
    if (state.failures === 0 && state.leases.size === 0) this.#states.delete(key)
  }

  /** Number of keys held. */
  get size (): number {
    return this.#states.size
  }

  #insert (key: string, state: KeyState): void {
    if (this.#states.size >= this.#maxKeys) {
      // Maps iterate in insertion order: the first key is the oldest.
      const oldest = this.#states.keys().next().value
      if (oldest !== undefined) this.#states.delete(oldest)
    }
    this.#states.set(key, state)
  }

  #sweep (now: number): void {
    this.#nextSweep = now + SWEEP_INTERVAL_MS
    for (const [key, state] of this.#states) {
      dropExpiredLeases(state, now)
      if (state.leases.size === 0 && now >= state.forgetAt) this.#states.delete(key)
    }
  }
}

function dropExpiredLeases (state: KeyState, now: number): void {
  for (const [ticket, until] of state.leases) {
    if (until <= now) state.leases.delete(ticket)
  }
}
