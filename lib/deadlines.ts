import { performance } from 'node:perf_hooks'

/** Something that gives up when its deadline passes. */
export interface Expiring {
  expire: () => void
}

/** Where an entry waits; deleting it from there cancels its deadline. */
export type DeadlineBucket = Set<Expiring>

/**
 * Deadlines of in-flight calls, all `timeoutMs` long, kept by one coarse timer instead of a timer per
 * call. A deadline is rounded up to the next tick; entries due at the same tick share a bucket, and an
 * entry that settles leaves its bucket at once. The timer runs only while some bucket is waiting, so an
 * idle process has none. An entry expires no earlier than `timeoutMs` after it was added and, timers
 * permitting, less than one tick after that.
 */
export class Deadlines {
  readonly timeoutMs: number
  readonly tickMs: number
  /** Buckets by due time. Every entry gets the same timeout on a monotonic clock, so they are in due order. */
  readonly #buckets = new Map<number, DeadlineBucket>()
  #lastDue = -1
  #lastBucket: DeadlineBucket | undefined
  #timer: NodeJS.Timeout | undefined

  /** `tickMs` defaults to a twentieth of the timeout, from 1 to 50 ms. */
  constructor (timeoutMs: number, tickMs = Math.min(50, Math.max(1, Math.round(timeoutMs / 20)))) {
    this.timeoutMs = timeoutMs
    this.tickMs = tickMs
  }

  /** Starts `entry`'s deadline; delete it from the returned bucket once it no longer needs one. */
  add (entry: Expiring): DeadlineBucket {
    const due = Math.ceil((performance.now() + this.timeoutMs) / this.tickMs) * this.tickMs
    let bucket = this.#lastBucket
    if (due !== this.#lastDue || bucket === undefined) {
      bucket = new Set()
      this.#buckets.set(due, bucket)
      this.#lastDue = due
      this.#lastBucket = bucket
      if (this.#timer === undefined) this.#arm(due)
    }
    bucket.add(entry)
    return bucket
  }

  /** Entries waiting (for tests and metrics). */
  get size (): number {
    let size = 0
    for (const bucket of this.#buckets.values()) size += bucket.size
    return size
  }

  #arm (due: number): void {
    this.#timer = setTimeout(this.#expireDue, Math.max(1, Math.ceil(due - performance.now())))
  }

  readonly #expireDue = (): void => {
    this.#timer = undefined
    const now = performance.now()
    for (const [due, bucket] of this.#buckets) {
      if (due > now) {
        this.#arm(due)
        return
      }
      this.#buckets.delete(due)
      if (bucket === this.#lastBucket) this.#lastBucket = undefined
      for (const entry of bucket) entry.expire()
    }
  }
}
