import { admit, afterOutcome, blockDuration, liveFailures, NO_COUNTS, type AttemptCounts } from '../attempt-rules.js'
import type { AttemptOutcome, AttemptStore, Reservation, ThrottlePolicy } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

interface KeyState extends AttemptCounts {
  /** Open reservations: ticket → lease end. */
  leases: Map<string, number>
  /** The eviction tier the key sits in: its failure count, with every capped block in one tier. */
  tier: number
}

const SWEEP_INTERVAL_MS = 60_000

const OPTIONS: StoreOptionRules = { maxKeys: 'count' }

/**
 * Attempt counters in process memory, for a single instance. At most `maxKeys` keys are held: expired
 * ones are swept every minute, and past the bound one key is evicted per new key, the least valuable
 * first: a key with nothing left to count, then the one with the fewest failures (oldest first), and a
 * key that has reached its block only when every key has, the one whose block ends first. So a spray of
 * new e-mails (one failure each) pushes out only keys with at most as many failures as it has.
 *
 * Keys sit in tiers by failure count, each tier in the order its keys last changed; the candidates are
 * the tiers' oldest keys, so an eviction costs one look per tier (at most freeFailures + 32), never a
 * scan of the keys.
 */
export class MemoryAttemptStore implements AttemptStore {
  readonly #states = new Map<string, KeyState>()
  readonly #tiers = new Map<number, Map<string, KeyState>>()
  readonly #maxKeys: number
  #nextSweep = 0

  constructor (options: { maxKeys?: number } = {}) {
    checkStoreOptions('MemoryAttemptStore', options, OPTIONS)
    const { maxKeys = 100_000 } = options
    this.#maxKeys = maxKeys
  }

  async reserve (key: string, ticket: string, policy: ThrottlePolicy): Promise<Reservation> {
    const now = Date.now()
    if (now >= this.#nextSweep) this.#sweep(now)

    let state = this.#states.get(key)
    if (state === undefined) {
      state = this.#insert(key, now, policy)
    } else {
      dropExpiredLeases(state, now)
      if (liveFailures(state, now) !== state.failures) this.#setCounts(key, state, { ...state, failures: 0 }, policy)
    }
    const reservation: Reservation = state.leases.has(ticket) ? { granted: true } : admit(state, state.leases.size, now, policy)
    if (reservation.granted) state.leases.set(ticket, now + policy.leaseMs)
    return reservation
  }

  async settle (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy): Promise<number> {
    const now = Date.now()
    let state = this.#states.get(key)
    if (state === undefined) {
      // Swept or evicted while the attempt ran: a failure still counts.
      if (outcome !== 'failure') return 0
      state = this.#insert(key, now, policy)
    }
    state.leases.delete(ticket)
    if (outcome !== 'cancel') this.#setCounts(key, state, afterOutcome(state, outcome, now, policy), policy)
    if (state.failures === 0 && state.leases.size === 0) this.#delete(key, state)
    return outcome === 'failure' ? blockDuration(state.failures, policy) : 0
  }

  /** Number of keys held. */
  get size (): number {
    return this.#states.size
  }

  #insert (key: string, now: number, policy: ThrottlePolicy): KeyState {
    if (this.#states.size >= this.#maxKeys) this.#evictOne(now, policy)
    const state: KeyState = { ...NO_COUNTS, leases: new Map(), tier: 0 }
    this.#states.set(key, state)
    this.#tier(0).set(key, state)
    return state
  }

  /** Changes a key's counts and moves it to the end of its (new) tier. */
  #setCounts (key: string, state: KeyState, counts: AttemptCounts, policy: ThrottlePolicy): void {
    this.#leaveTier(key, state)
    state.failures = counts.failures
    state.blockedUntil = counts.blockedUntil
    state.forgetAt = counts.forgetAt
    // Past freeFailures + 31 every block is maxBlockMs, so one tier keeps them in block-end order.
    state.tier = Math.min(counts.failures, policy.freeFailures + 31)
    this.#tier(state.tier).set(key, state)
  }

  #evictOne (now: number, policy: ThrottlePolicy): void {
    let victim: [string, KeyState] | undefined
    let victimRank: [number, number] = [Infinity, Infinity]
    for (const tier of this.#tiers.values()) {
      const head = tier.entries().next().value as [string, KeyState]
      const rank = evictionRank(head[1], now, policy)
      if (rank[0] < victimRank[0] || (rank[0] === victimRank[0] && rank[1] < victimRank[1])) {
        victim = head
        victimRank = rank
      }
    }
    if (victim !== undefined) this.#delete(...victim)
  }

  async clear (key: string): Promise<void> {
    const state = this.#states.get(key)
    if (state !== undefined) this.#delete(key, state)
  }

  async clearGroup (group: string): Promise<void> {
    const prefix = `${group}/`
    for (const [key, state] of this.#states) if (key.startsWith(prefix)) this.#delete(key, state)
  }

  #tier (index: number): Map<string, KeyState> {
    let tier = this.#tiers.get(index)
    if (tier === undefined) {
      tier = new Map()
      this.#tiers.set(index, tier)
    }
    return tier
  }

  #leaveTier (key: string, state: KeyState): void {
    const tier = this.#tiers.get(state.tier)!
    tier.delete(key)
    if (tier.size === 0) this.#tiers.delete(state.tier)
  }

  #delete (key: string, state: KeyState): void {
    this.#leaveTier(key, state)
    this.#states.delete(key)
  }

  #sweep (now: number): void {
    this.#nextSweep = now + SWEEP_INTERVAL_MS
    for (const [key, state] of this.#states) {
      dropExpiredLeases(state, now)
      if (state.leases.size === 0 && liveFailures(state, now) === 0) this.#delete(key, state)
    }
  }
}

/**
 * Which key goes first, compared as [class, order]: nothing left to count (0), failures short of a
 * block, fewest first (1), a key that reached a block, the one whose block ends first (2). Within a
 * tier the oldest key is first on every one of these orders.
 */
function evictionRank (state: KeyState, now: number, policy: ThrottlePolicy): [number, number] {
  if (liveFailures(state, now) === 0) return [0, state.tier]
  if (state.failures < policy.freeFailures) return [1, state.failures]
  return [2, state.blockedUntil]
}

function dropExpiredLeases (state: KeyState, now: number): void {
  for (const [ticket, until] of state.leases) {
    if (until <= now) state.leases.delete(ticket)
  }
}
