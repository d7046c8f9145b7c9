import type { MfaStore, StoredMfa } from '../types.js'

/** Second factors in process memory, for a single instance. */
export class MemoryMfaStore implements MfaStore {
  readonly #records = new Map<string, StoredMfa>()

  async get (accountId: string): Promise<StoredMfa | null> {
    const record = this.#records.get(accountId)
    return record === undefined ? null : { ...record, recoveryCodes: [...record.recoveryCodes] }
  }

  async begin (accountId: string, secret: string): Promise<boolean> {
    if (this.#records.get(accountId)?.enabled === true) return false
    this.#records.set(accountId, { secret, enabled: false, lastStep: 0, recoveryCodes: [] })
    return true
  }

  async enable (accountId: string, secret: string, lastStep: number, recoveryCodes: string[]): Promise<boolean> {
    const record = this.#records.get(accountId)
    if (record === undefined || record.enabled || record.secret !== secret) return false
    this.#records.set(accountId, { secret, enabled: true, lastStep, recoveryCodes: [...recoveryCodes] })
    return true
  }

  async acceptStep (accountId: string, step: number): Promise<boolean> {
    const record = this.#records.get(accountId)
    if (record?.enabled !== true || step <= record.lastStep) return false
    record.lastStep = step
    return true
  }

  async useRecoveryCode (accountId: string, hashes: string[]): Promise<boolean> {
    const record = this.#records.get(accountId)
    const index = record?.enabled === true ? record.recoveryCodes.findIndex((hash) => hashes.includes(hash)) : -1
    if (index === -1) return false
    record!.recoveryCodes.splice(index, 1)
    return true
  }

  async replaceRecoveryCodes (accountId: string, recoveryCodes: string[]): Promise<boolean> {
    const record = this.#records.get(accountId)
    if (record?.enabled !== true) return false
    record.recoveryCodes = [...recoveryCodes]
    return true
  }

  async disable (accountId: string): Promise<boolean> {
    const enabled = this.#records.get(accountId)?.enabled === true
    this.#records.delete(accountId)
    return enabled
  }

  async * secrets (): AsyncIterable<{ accountId: string, secret: string }> {
    for (const [accountId, { secret }] of [...this.#records]) yield { accountId, secret }
  }

  async reseal (accountId: string, secret: string, resealed: string): Promise<boolean> {
    const record = this.#records.get(accountId)
    if (record?.secret !== secret) return false
    record.secret = resealed
    return true
  }
}
