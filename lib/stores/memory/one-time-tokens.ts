import type { OneTimeToken, OneTimeTokenStore } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

interface Entry { hash: string, token: Readonly<OneTimeToken>, expiresAt: number }

export interface MemoryOneTimeTokenStoreOptions {
  /**
   * Tokens of accounts held at most (default 100,000): reset, e-mail change and revert links, `mfaToken`s, an
   * account's passkey challenges. Past it a new one is refused (the request answers 503): none is ever dropped.
   */
  maxTokens?: number
  /**
   * Tokens of no account held at most (default 100,000): what anyone can ask for, sign-in passkey challenges
   * (LoginOptions) and pending registrations. Past it the oldest of them goes, never a token of an account.
   */
  maxOpenTokens?: number
}

const SWEEP_INTERVAL_MS = 60_000
/** How often a full store may sweep out of turn, before it refuses a token. */
const FULL_SWEEP_INTERVAL_MS = 1000

const OPTIONS: StoreOptionRules = { maxTokens: 'count', maxOpenTokens: 'count' }

/**
 * One-time tokens in process memory, for a single instance; expired ones are swept at most once a minute.
 * Tokens of accounts and tokens of no account are bounded apart (a flood of LoginOptions or registrations
 * cannot exhaust the heap, nor push out a reset link or an `mfaToken`): see MemoryOneTimeTokenStoreOptions.
 */
export class MemoryOneTimeTokenStore implements OneTimeTokenStore {
  /** Tokens of accounts. */
  readonly #slots = new Map<string, Entry>()
  /** Tokens of no account, oldest first (a Map iterates in insertion order). */
  readonly #open = new Map<string, Entry>()
  readonly #maxTokens: number
  readonly #maxOpenTokens: number
  #nextSweep = 0
  #nextFullSweep = 0

  constructor (options: MemoryOneTimeTokenStoreOptions = {}) {
    checkStoreOptions('MemoryOneTimeTokenStore', options, OPTIONS)
    const { maxTokens = 100_000, maxOpenTokens = 100_000 } = options
    this.#maxTokens = maxTokens
    this.#maxOpenTokens = maxOpenTokens
  }

  async put (slot: string, hash: string, token: OneTimeToken, ttlMs: number): Promise<void> {
    const now = Date.now()
    if (now >= this.#nextSweep) this.#sweep(now)
    const entry = { hash, token: Object.freeze({ ...token }), expiresAt: now + ttlMs }
    if (token.accountId === '') {
      this.#slots.delete(slot)
      // Re-inserted, so the Map's order stays the order of the last put.
      this.#open.delete(slot)
      if (this.#open.size >= this.#maxOpenTokens) this.#open.delete(this.#open.keys().next().value!)
      this.#open.set(slot, entry)
      return
    }
    if (!this.#slots.has(slot) && this.#slots.size >= this.#maxTokens) {
      if (now >= this.#nextFullSweep) {
        this.#nextFullSweep = now + FULL_SWEEP_INTERVAL_MS
        this.#sweep(now)
      }
      if (this.#slots.size >= this.#maxTokens) throw new Error(`MemoryOneTimeTokenStore is full: ${this.#maxTokens} tokens of accounts are live (maxTokens)`)
    }
    this.#open.delete(slot)
    this.#slots.set(slot, entry)
  }

  /** Number of tokens held. */
  get size (): number {
    return this.#slots.size + this.#open.size
  }

  async find (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    const entry = this.#live(slot, hash, purpose)
    return entry === undefined ? null : { ...entry.token }
  }

  async consume (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    // No await between the check and the delete: of concurrent callers one finds it.
    const entry = this.#live(slot, hash, purpose)
    if (entry === undefined) return null
    this.#delete(slot)
    return { ...entry.token }
  }

  async remove (slot: string): Promise<void> {
    this.#delete(slot)
  }

  async removeAll (accountId: string): Promise<void> {
    // Tokens of no account are never in #slots: an empty accountId removes nothing.
    for (const [slot, entry] of this.#slots) if (entry.token.accountId === accountId) this.#slots.delete(slot)
  }

  async consumeFirst (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    // No await from the check to the last delete: of concurrent callers on one group, one finds its token.
    const entry = this.#live(slot, hash, purpose)
    if (entry === undefined || entry.token.accountId === '') return null
    const now = Date.now()
    const group = this.#group(entry.token.accountId, purpose)
    if (group.some(([other, { expiresAt }]) => other !== slot && expiresAt > now && expiresAt < entry.expiresAt)) return null
    for (const [member] of group) this.#slots.delete(member)
    return { ...entry.token }
  }

  async list (accountId: string, purpose: string): Promise<OneTimeToken[]> {
    const now = Date.now()
    return this.#group(accountId, purpose).filter(([, { expiresAt }]) => expiresAt > now).map(([, { token }]) => ({ ...token }))
  }

  /** Every token (live or not yet swept) of the account and purpose, with its slot. */
  #group (accountId: string, purpose: string): Array<[string, Entry]> {
    return accountId === '' ? [] : [...this.#slots].filter(([, { token }]) => token.accountId === accountId && token.purpose === purpose)
  }

  #live (slot: string, hash: string, purpose: string): Entry | undefined {
    const entry = this.#slots.get(slot) ?? this.#open.get(slot)
    return entry !== undefined && entry.hash === hash && entry.token.purpose === purpose && entry.expiresAt > Date.now() ? entry : undefined
  }

  #delete (slot: string): void {
    this.#slots.delete(slot)
    this.#open.delete(slot)
  }

  #sweep (now: number): void {
    this.#nextSweep = now + SWEEP_INTERVAL_MS
    for (const entries of [this.#slots, this.#open]) for (const [slot, entry] of entries) if (entry.expiresAt <= now) entries.delete(slot)
  }
}
