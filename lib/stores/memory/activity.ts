import type { ActivityRecord, ActivityStore } from '../types.js'
import { registerAtOnce } from '../at-once.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

const DAY_MS = 86_400_000
/** How often, at most, a full store looks for records past their retention to make room. */
const SWEEP_INTERVAL_MS = 1000

export interface MemoryActivityStoreOptions {
  /**
   * Records kept at most, of all accounts together (default 10000). Once reached, a record is kept only in
   * place of an older one of its own account and type (and records past their retention are swept): no
   * account's records ever make room for another's, so a full store keeps no new kind of event until some expire.
   */
  maxRecords?: number
  /**
   * Records kept per account and event type, the newest (default 20): a flood of one kind (a stranger's failed
   * logins, an owner's sign-ins) pushes out only older records of that kind, never the account's other events.
   */
  maxPerType?: number
  /** Milliseconds a record is kept (default 90 days). */
  retentionMs?: number
}

const OPTIONS: StoreOptionRules = { maxRecords: 'count', maxPerType: 'count', retentionMs: 'milliseconds' }

/**
 * One account's records of one type, oldest first, and their arrival numbers (an account's records are listed in
 * the order they came). Two arrays, not an object per record: the numbers are small integers kept unboxed.
 */
interface OfType {
  records: ActivityRecord[]
  seqs: number[]
}

/**
 * Security events in process memory: for one instance, tests and demos (contract §22). Bounded per account and
 * event type, not all accounts together: what one account does, or what anyone does about it, never pushes
 * another account's records out, nor another kind of event of the same account.
 */
export class MemoryActivityStore implements ActivityStore {
  /** Account id → event type → its records, oldest first. */
  readonly #accounts = new Map<string, Map<string, OfType>>()
  #size = 0
  #seq = 0
  #nextSweep = 0
  readonly #maxRecords: number
  readonly #maxPerType: number
  readonly #retentionMs: number

  constructor (options: MemoryActivityStoreOptions = {}) {
    checkStoreOptions('MemoryActivityStore', options, OPTIONS)
    const { maxRecords = 10_000, maxPerType = 20, retentionMs = 90 * DAY_MS } = options
    if (!Number.isSafeInteger(retentionMs) || retentionMs < 1000) throw new TypeError('MemoryActivityStore: retentionMs must be a whole number of milliseconds from 1000')
    this.#maxRecords = maxRecords
    this.#maxPerType = maxPerType
    this.#retentionMs = retentionMs
    // Every Login and Logout keeps a record: in the same turn (at-once.ts).
    registerAtOnce(this, 'add', MemoryActivityStore.prototype.add, (record: ActivityRecord) => { this.#add(record) })
  }

  async add (record: ActivityRecord): Promise<void> {
    this.#add(record)
  }

  #add (record: ActivityRecord): void {
    let types = this.#accounts.get(record.accountId)
    let ofType = types?.get(record.type)
    const replacesOwn = ofType !== undefined && ofType.records.length >= this.#maxPerType
    // Full: room only from records past their retention, never from another account's or another type's.
    if (!replacesOwn && this.#size >= this.#maxRecords && !this.#sweep()) return
    // Built field by field, not spread and frozen: this runs on every event, and list() hands out copies only.
    const kept: ActivityRecord = { type: record.type, time: record.time, accountId: record.accountId, details: copyDetails(record.details) }
    if (record.requestId !== undefined) kept.requestId = record.requestId
    if (record.ip !== undefined) kept.ip = record.ip
    // The sweep may have removed this account's or type's records.
    types = this.#accounts.get(record.accountId)
    if (types === undefined) this.#accounts.set(record.accountId, types = new Map())
    ofType = types.get(record.type)
    if (ofType === undefined) types.set(record.type, ofType = { records: [], seqs: [] })
    ofType.records.push(kept)
    ofType.seqs.push(this.#seq++)
    if (ofType.records.length > this.#maxPerType) {
      ofType.records.shift()
      ofType.seqs.shift()
    } else {
      this.#size++
    }
  }

  async list (accountId: string, limit: number): Promise<ActivityRecord[]> {
    const types = this.#accounts.get(accountId)
    if (types === undefined) return []
    const since = Date.now() - this.#retentionMs
    const live: Array<{ record: ActivityRecord, seq: number }> = []
    for (const { records, seqs } of types.values()) {
      for (let i = 0; i < records.length; i++) if (records[i]!.time > since) live.push({ record: records[i]!, seq: seqs[i]! })
    }
    return live.sort((a, b) => b.seq - a.seq).slice(0, limit).map(({ record }) => structuredClone(record))
  }

  async forget (accountId: string): Promise<void> {
    const types = this.#accounts.get(accountId)
    if (types === undefined) return
    for (const ofType of types.values()) this.#size -= ofType.records.length
    this.#accounts.delete(accountId)
  }

  /** Removes every record past its retention (at most once a second); true if that made room. */
  #sweep (): boolean {
    const now = Date.now()
    if (now < this.#nextSweep) return false
    this.#nextSweep = now + SWEEP_INTERVAL_MS
    const since = now - this.#retentionMs
    for (const [accountId, types] of this.#accounts) {
      for (const [type, ofType] of types) {
        const live: OfType = { records: [], seqs: [] }
        for (let i = 0; i < ofType.records.length; i++) {
          if (ofType.records[i]!.time > since) {
            live.records.push(ofType.records[i]!)
            live.seqs.push(ofType.seqs[i]!)
          }
        }
        this.#size -= ofType.records.length - live.records.length
        if (live.records.length === 0) types.delete(type)
        else if (live.records.length < ofType.records.length) types.set(type, live)
      }
      if (types.size === 0) this.#accounts.delete(accountId)
    }
    return this.#size < this.#maxRecords
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
