import type { FastifyBaseLogger } from 'fastify'
import { Deadlines, type DeadlineBucket, type Expiring } from './deadlines.js'
import { requestError } from './errors.js'

/** Calls a store (logging to the request's logger, or the instance's); any failure or timeout becomes 503. */
export type StoreCall = <T>(log: FastifyBaseLogger, operation: string, call: () => Promise<T>) => Promise<T>

class StoreTimeoutError extends Error {
  readonly code = 'FST_PWAUTH_STORE_TIMEOUT'
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
    const { name, code, message } = (err ?? {}) as { name?: unknown, code?: unknown, message?: unknown }
    this.#log.error({ operation: this.#operation, storeError: { name, code, message: String(message).slice(0, 300) } },
      'fastify-password-auth: store failed')
    this.#reject(requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 }))
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
