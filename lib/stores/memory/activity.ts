import type { ActivityRecord, ActivityStore } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

const DAY_MS = 86_400_000

export interface MemoryActivityStoreOptions {
  /** Records kept at most, of all accounts together: past it the oldest goes (default 10000). */
  maxRecords?: number
  /** Milliseconds a record is kept (default 90 days). */
  retentionMs?: number
}

const OPTIONS: StoreOptionRules = { maxRecords: 'count', retentionMs: 'milliseconds' }

/** Security events in a ring in process memory: for one instance, tests and demos. */
export class MemoryActivityStore implements ActivityStore {
  // A fixed ring: keeping an event costs the same at 10 records as at 10,000 (it is on every request's path).
  readonly #ring: Array<ActivityRecord | undefined>
  #next = 0
  #size = 0
  readonly #retentionMs: number

  constructor (options: MemoryActivityStoreOptions = {}) {
    checkStoreOptions('MemoryActivityStore', options, OPTIONS)
    const { maxRecords = 10_000, retentionMs = 90 * DAY_MS } = options
    if (!Number.isSafeInteger(maxRecords) || maxRecords < 1) throw new TypeError('MemoryActivityStore: maxRecords must be a whole number from 1')
    if (!Number.isSafeInteger(retentionMs) || retentionMs < 1000) throw new TypeError('MemoryActivityStore: retentionMs must be a whole number of milliseconds from 1000')
    this.#ring = new Array(maxRecords)
    this.#retentionMs = retentionMs
  }

  async add (record: ActivityRecord): Promise<void> {
    // Built field by field, not spread and frozen: this runs on every event, and list() hands out copies only.
    const kept: ActivityRecord = { type: record.type, time: record.time, accountId: record.accountId, details: copyDetails(record.details) }
    if (record.requestId !== undefined) kept.requestId = record.requestId
    if (record.ip !== undefined) kept.ip = record.ip
    this.#ring[this.#next] = kept
    this.#next = (this.#next + 1) % this.#ring.length
    if (this.#size < this.#ring.length) this.#size++
  }

  async list (accountId: string, limit: number): Promise<ActivityRecord[]> {
    const since = Date.now() - this.#retentionMs
    const found: ActivityRecord[] = []
    for (let seen = 0; seen < this.#size && found.length < limit; seen++) {
      const record = this.#ring[this.#at(seen)]!
      if (record.time <= since) break
      if (record.accountId === accountId) found.push(structuredClone(record))
    }
    return found
  }

  async forget (accountId: string): Promise<void> {
    const kept: ActivityRecord[] = []
    for (let seen = this.#size - 1; seen >= 0; seen--) {
      const record = this.#ring[this.#at(seen)]!
      if (record.accountId !== accountId) kept.push(record)
    }
    this.#ring.fill(undefined)
    kept.forEach((record, i) => { this.#ring[i] = record })
    this.#size = kept.length
    this.#next = kept.length % this.#ring.length
  }

  /** The index of the record `seen` places before the newest. */
  #at (seen: number): number {
    return (this.#next - 1 - seen + 2 * this.#ring.length) % this.#ring.length
  }
}

/** The event's own copy of its details: flat values as they are, nested ones cloned (events are mostly flat). */
function copyDetails (details: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  for (const key in details) {
    const value = details[key]
    copy[key] = typeof value === 'object' && value !== null ? structuredClone(value) : value
  }
  return copy
}
