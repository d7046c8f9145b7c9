import type { PasskeyAddResult, PasskeyStore, StoredPasskey } from '../types.js'

const copy = (passkey: StoredPasskey): StoredPasskey => ({ ...passkey, transports: [...passkey.transports] })

/** Passkeys in process memory, for a single instance. */
export class MemoryPasskeyStore implements PasskeyStore {
  readonly #passkeys = new Map<string, StoredPasskey>()
  readonly #handles = new Map<string, string>()
  readonly #generations = new Map<string, number>()

  async userHandle (accountId: string, candidate: string): Promise<string> {
    const stored = this.#handles.get(accountId)
    if (stored !== undefined) return stored
    this.#handles.set(accountId, candidate)
    return candidate
  }

  async generation (accountId: string): Promise<number> {
    return this.#generations.get(accountId) ?? 0
  }

  async add (passkey: StoredPasskey, max: number, generation: number): Promise<PasskeyAddResult> {
    if ((this.#generations.get(passkey.accountId) ?? 0) !== generation) return 'outrun'
    if (this.#passkeys.has(passkey.id)) return 'duplicate'
    if (this.#owned(passkey.accountId).length >= max) return 'limit'
    this.#passkeys.set(passkey.id, copy(passkey))
    return 'added'
  }

  async get (credentialId: string): Promise<StoredPasskey | null> {
    const passkey = this.#passkeys.get(credentialId)
    return passkey === undefined ? null : copy(passkey)
  }

  async list (accountId: string): Promise<StoredPasskey[]> {
    return this.#owned(accountId).map(copy)
  }

  async use (credentialId: string, expectedCounter: number, counter: number, backedUp: boolean, usedAt: number): Promise<boolean> {
    const passkey = this.#passkeys.get(credentialId)
    if (passkey === undefined || passkey.counter !== expectedCounter) return false
    Object.assign(passkey, { counter, backedUp, lastUsedAt: usedAt })
    return true
  }

  async remove (accountId: string, credentialId: string): Promise<boolean> {
    if (this.#passkeys.get(credentialId)?.accountId !== accountId) return false
    return this.#passkeys.delete(credentialId)
  }

  async removeAll (accountId: string): Promise<number> {
    this.#generations.set(accountId, (this.#generations.get(accountId) ?? 0) + 1)
    return this.#removeOwned(accountId)
  }

  async forget (accountId: string): Promise<number> {
    this.#handles.delete(accountId)
    this.#generations.delete(accountId)
    return this.#removeOwned(accountId)
  }

  #removeOwned (accountId: string): number {
    const owned = this.#owned(accountId)
    for (const passkey of owned) this.#passkeys.delete(passkey.id)
    return owned.length
  }

  #owned (accountId: string): StoredPasskey[] {
    return [...this.#passkeys.values()].filter((passkey) => passkey.accountId === accountId).sort((a, b) => a.createdAt - b.createdAt)
  }
}
