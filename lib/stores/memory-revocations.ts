import type { RevocationStore } from './types.js'

const SWEEP_INTERVAL_MS = 60_000

/**
 * Revoked token ids in process memory, for a single instance. Entries live until their token expires;
 * expired ones are swept at most once a minute, so memory is bounded by logouts per token lifetime.
 */
export class MemoryRevocationStore implements RevocationStore {
  readonly #expiresAt = new Map<string, number>()
  #nextSweep = 0

  async revoke (tokenId: string, expiresAt: number): Promise<void> {
    const now = Date.now()
    if (now >= this.#nextSweep) this.#sweep(now)
    if (expiresAt > now) this.#expiresAt.set(tokenId, expiresAt)
  }

  async isRevoked (tokenId: string): Promise<boolean> {
    const expiresAt = this.#expiresAt.get(tokenId)
    return expiresAt !== undefined && expiresAt > Date.now()
  }

  /** Number of revocations held, expired or not. */
  get size (): number {
    return this.#expiresAt.size
  }

  #sweep (now: number): void {
    this.#nextSweep = now + SWEEP_INTERVAL_MS
    for (const [tokenId, expiresAt] of this.#expiresAt) {
      if (expiresAt <= now) this.#expiresAt.delete(tokenId)
    }
  }
}
