import type { ActivityRecord, ActivityStore } from '../types.js'

const DAY_MS = 86_400_000

export interface MemoryActivityStoreOptions {
  /** Records kept at most, of all accounts together: past it the oldest goes (default 10000). */
  maxRecords?: number
  /** Milliseconds a record is kept (default 90 days). */
  retentionMs?: number
}

/** Security events in a ring in process memory: for one instance, tests and demos. */
export class MemoryActivityStore implements ActivityStore {
  readonly #records: Array<Readonly<ActivityRecord>> = []
  readonly #maxRecords: number
  readonly #retentionMs: number

  constructor ({ maxRecords = 10_000, retentionMs = 90 * DAY_MS }: MemoryActivityStoreOptions = {}) {
    if (!Number.isSafeInteger(maxRecords) || maxRecords < 1) throw new TypeError('MemoryActivityStore: maxRecords must be a whole number from 1')
    if (!Number.isSafeInteger(retentionMs) || retentionMs < 1000) throw new TypeError('MemoryActivityStore: retentionMs must be a whole number of milliseconds from 1000')
    this.#maxRecords = maxRecords
    this.#retentionMs = retentionMs
  }

  async add (record: ActivityRecord): Promise<void> {
    this.#records.push(Object.freeze(structuredClone(record)))
    if (this.#records.length > this.#maxRecords) this.#records.shift()
  }

  async list (accountId: string, limit: number): Promise<ActivityRecord[]> {
    const since = Date.now() - this.#retentionMs
    const found: ActivityRecord[] = []
    for (let i = this.#records.length - 1; i >= 0 && found.length < limit; i--) {
      const record = this.#records[i]!
      if (record.time <= since) break
      if (record.accountId === accountId) found.push(structuredClone(record))
    }
    return found
  }

  async forget (accountId: string): Promise<void> {
    for (let i = this.#records.length - 1; i >= 0; i--) if (this.#records[i]!.accountId === accountId) this.#records.splice(i, 1)
  }
}
