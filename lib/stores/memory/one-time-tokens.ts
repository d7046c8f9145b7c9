import type { OneTimeToken, OneTimeTokenStore } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

interface Entry { hash: string, token: Readonly<OneTimeToken>, expiresAt: number }

const SWEEP_INTERVAL_MS = 60_000

const OPTIONS: StoreOptionRules = { maxTokens: 'count' }

/**
 * One-time tokens in process memory, for a single instance; expired ones are swept at most once a minute.
 * At most `maxTokens` are held (a flood of registrations cannot exhaust the heap): past that the oldest goes.
 */
export class MemoryOneTimeTokenStore implements OneTimeTokenStore {
  readonly #slots = new Map<string, Entry>()
  readonly #maxTokens: number
  #nextSweep = 0

  constructor (options: { maxTokens?: number } = {}) {
    checkStoreOptions('MemoryOneTimeTokenStore', options, OPTIONS)
    const { maxTokens = 100_000 } = options
    this.#maxTokens = maxTokens
  }

  async put (slot: string, hash: string, token: OneTimeToken, ttlMs: number): Promise<void> {
    const now = Date.now()
    if (now >= this.#nextSweep) this.#sweep(now)
    // Re-inserted, so the Map's order stays the order of the last put.
    this.#slots.delete(slot)
    if (this.#slots.size >= this.#maxTokens) this.#slots.delete(this.#slots.keys().next().value!)
    this.#slots.set(slot, { hash, token: Object.freeze({ ...token }), expiresAt: now + ttlMs })
  }

  /** Number of tokens held. */
  get size (): number {
    return this.#slots.size
  }

  async find (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    const entry = this.#live(slot, hash, purpose)
    return entry === undefined ? null : { ...entry.token }
  }

  async consume (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    // No await between the check and the delete: of concurrent callers one finds it.
    const entry = this.#live(slot, hash, purpose)
    if (entry === undefined) return null
    this.#slots.delete(slot)
    return { ...entry.token }
  }

  async remove (slot: string): Promise<void> {
    this.#slots.delete(slot)
  }

  async removeAll (accountId: string): Promise<void> {
    for (const [slot, entry] of this.#slots) if (entry.token.accountId === accountId && accountId !== '') this.#slots.delete(slot)
  }

  #live (slot: string, hash: string, purpose: string): Entry | undefined {
    const entry = this.#slots.get(slot)
    return entry !== undefined && entry.hash === hash && entry.token.purpose === purpose && entry.expiresAt > Date.now() ? entry : undefined
  }

  #sweep (now: number): void {
    this.#nextSweep = now + SWEEP_INTERVAL_MS
    for (const [slot, entry] of this.#slots) if (entry.expiresAt <= now) this.#slots.delete(slot)
  }
}
