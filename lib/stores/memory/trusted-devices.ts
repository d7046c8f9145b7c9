import type { NewTrustedDevice, TrustedDeviceInfo, TrustedDeviceStore } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

interface Trust extends TrustedDeviceInfo {
  deviceHash: string
  generation: number
}

interface Account {
  generation: number
  trusts: Trust[]
}

export interface MemoryTrustedDeviceStoreOptions {
  /** The clock, epoch milliseconds (default Date.now); tests move it to watch trusts end. */
  now?: () => number
}

const OPTIONS: StoreOptionRules = { now: 'function' }

/**
 * Devices trusted for the second factor, in process memory, for a single instance. An account's entry keeps
 * its generation after its last trust ends, so a trust made with an older one never comes back to life.
 */
export class MemoryTrustedDeviceStore implements TrustedDeviceStore {
  readonly #accounts = new Map<string, Account>()
  readonly #now: () => number

  constructor (options: MemoryTrustedDeviceStoreOptions = {}) {
    checkStoreOptions('MemoryTrustedDeviceStore', options, OPTIONS)
    const { now = Date.now } = options
    this.#now = now
  }

  async generation (accountId: string): Promise<number> {
    return this.#accounts.get(accountId)?.generation ?? 0
  }

  async trust (accountId: string, { id, deviceHash, label }: NewTrustedDevice, ttlMs: number, generation: number): Promise<boolean> {
    const account = this.#account(accountId)
    if (account.generation !== generation) return false
    const now = this.#now()
    account.trusts = account.trusts.filter((trust) => trust.deviceHash !== deviceHash)
    account.trusts.push({ id, deviceHash, label, generation, createdAt: now, lastUsedAt: now, trustedUntil: now + ttlMs })
    return true
  }

  async use (accountId: string, deviceHashes: string[]): Promise<{ id: string, generation: number } | null> {
    const trust = this.#live(accountId).find(({ deviceHash }) => deviceHashes.includes(deviceHash))
    if (trust === undefined) return null
    trust.lastUsedAt = this.#now()
    return { id: trust.id, generation: trust.generation }
  }

  async list (accountId: string): Promise<TrustedDeviceInfo[]> {
    return this.#live(accountId).map(({ id, label, createdAt, trustedUntil, lastUsedAt }) => ({ id, label, createdAt, trustedUntil, lastUsedAt }))
  }

  async remove (accountId: string, id: string): Promise<boolean> {
    const live = this.#live(accountId)
    const account = this.#accounts.get(accountId)
    if (account === undefined || !live.some((trust) => trust.id === id)) return false
    account.trusts = live.filter((trust) => trust.id !== id)
    return true
  }

  async endAll (accountId: string): Promise<number> {
    const account = this.#account(accountId)
    account.generation++
    account.trusts = []
    return account.generation
  }

  async forget (accountId: string): Promise<void> {
    this.#accounts.delete(accountId)
  }

  #account (accountId: string): Account {
    let account = this.#accounts.get(accountId)
    if (account === undefined) this.#accounts.set(accountId, account = { generation: 0, trusts: [] })
    return account
  }

  /** The account's live trusts; the ended ones are dropped on the way. */
  #live (accountId: string): Trust[] {
    const account = this.#accounts.get(accountId)
    if (account === undefined) return []
    const now = this.#now()
    account.trusts = account.trusts.filter((trust) => trust.generation === account.generation && trust.trustedUntil > now)
    return account.trusts
  }
}
