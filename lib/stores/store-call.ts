import { performance } from 'node:perf_hooks'
import type { FastifyBaseLogger } from 'fastify'
import { requestError } from '../common/errors.js'

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

/** Calls a store (logging to the request's logger, or the instance's); any failure or timeout becomes 503. */
export type StoreCall = <T>(log: FastifyBaseLogger, operation: string, call: () => Promise<T>) => Promise<T>

class StoreTimeoutError extends Error {
  readonly code = 'FST_PWAUTH_STORE_TIMEOUT'
}

/**
 * Logs a store's failure (its error's name, code and message only: a store client's error object may carry the
 * command and its arguments) and gives the 503 to answer with.
 */
function storeFailed (log: FastifyBaseLogger, operation: string, err: unknown): Error {
  const { name, code, message } = (err ?? {}) as { name?: unknown, code?: unknown, message?: unknown }
  log.error({ operation, storeError: { name, code, message: String(message).slice(0, 300) } }, 'fastify-password-auth: store failed')
  return requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 })
}

/**
 * A store method that answers in the same turn (at-once.ts), called as storeCall would call it but without a
 * promise or a deadline (it cannot hang): a throw is logged and becomes the 503, thrown.
 */
export function callAtOnce<T> (log: FastifyBaseLogger, operation: string, call: () => T): T {
  try {
    return call()
  } catch (err) {
    throw storeFailed(log, operation, err)
  }
}

/** One call in flight: settles its promise once, from the store's answer, its failure, or its deadline. */
class PendingCall<T> implements Expiring {
  readonly #log: FastifyBaseLogger
  readonly #operation: string
  readonly #resolve: (value: T) => void
  readonly #reject: (error: Error) => void
  readonly #timeoutMessage: string
  bucket: DeadlineBucket | undefined
  #settled = false

  constructor (log: FastifyBaseLogger, operation: string, resolve: (value: T) => void, reject: (error: Error) => void, timeoutMessage: string) {
    this.#log = log
    this.#operation = operation
    this.#resolve = resolve
    this.#reject = reject
    this.#timeoutMessage = timeoutMessage
  }

  answer (value: T): void {
    if (this.#settled) return
    this.#settled = true
    this.bucket!.delete(this)
    this.#resolve(value)
  }

  fail (err: unknown): void {
    if (this.#settled) return
    this.#settled = true
    this.bucket!.delete(this)
    this.#reject(storeFailed(this.#log, this.#operation, err))
  }

  expire (): void {
    this.fail(new StoreTimeoutError(this.#timeoutMessage))
  }
}

/**
 * Store calls fail closed: an error, or no answer within `timeoutMs` (a blackholed connection, a frozen
 * server, a client queueing commands while it reconnects), is a 503 so a request never hangs on a store.
 * One shared coarse timer keeps every call's deadline (see Deadlines): a timer per call cost more than
 * the call itself on memory stores. The log gets the error's name, code and message only: a store
 * client's error object may carry the command and its arguments.
 */
export function createStoreCall (timeoutMs: number): StoreCall {
  const deadlines = new Deadlines(timeoutMs)
  const timeoutMessage = `no answer within ${timeoutMs} ms`
  // Not async: the promise below is the only layer a call adds.
  return function storeCall<T> (log: FastifyBaseLogger, operation: string, call: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending = new PendingCall<T>(log, operation, resolve, reject, timeoutMessage)
      pending.bucket = deadlines.add(pending)
      let answer: Promise<T>
      try {
        answer = call()
      } catch (err) {
        pending.fail(err)
        return
      }
      Promise.resolve(answer).then((value) => { pending.answer(value) }, (err: unknown) => { pending.fail(err) })
    })
  }
}
