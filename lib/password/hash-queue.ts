import { availableParallelism } from 'node:os'
import { requestError } from '../common/errors.js'

/**
 * Runs argon2 work with bounded concurrency and a bounded wait list. Work beyond both bounds is shed
 * at once with 503 instead of queueing without limit, so a flood of logins cannot grow memory or latency
 * without end, and the libuv thread pool keeps a free thread for everything else.
 */
export class HashQueue {
  readonly concurrency: number
  readonly maxWaiting: number
  #running = 0
  #waiting: Waiter[] = []
  #shed = 0

  constructor (concurrency: number, maxWaiting: number) {
    this.concurrency = concurrency
    this.maxWaiting = maxWaiting
  }

  /** Number of operations running or waiting. */
  get size (): number {
    return this.#running + this.#waiting.length
  }

  /** Number of operations refused because both bounds were reached. */
  get shed (): number {
    return this.#shed
  }

  /**
   * True, and counted as shed, when every slot is busy and the wait list is full: a request that needs a
   * hash can be refused before its body is read. Never while a slot or a place in the wait list is free,
   * and never without a wait list (then a slot freed during the request's parsing would have served it).
   */
  shedIfFull (): boolean {
    if (this.maxWaiting === 0 || this.#running < this.concurrency || this.#waiting.length < this.maxWaiting) return false
    this.#shed++
    return true
  }

  /**
   * Runs `task` in a slot. `startBy` (performance.now() time): a task still waiting then is shed with 503
   * instead of running late. A password attempt counts in the throttle only for its lease, so a
   * verification that started after the lease ended would be a guess the throttle no longer sees.
   */
  async run<T> (task: () => Promise<T>, startBy = Infinity): Promise<T> {
    if (this.#running < this.concurrency) {
      this.#running++
    } else if (this.#waiting.length < this.maxWaiting) {
      // The finishing task hands its slot over, so #running stays as it is.
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = { resolve, timer: undefined }
        if (startBy !== Infinity) {
          waiter.timer = setTimeout(() => {
            this.#waiting.splice(this.#waiting.indexOf(waiter), 1)
            this.#shed++
            reject(requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 }))
          }, Math.max(0, startBy - performance.now()))
        }
        this.#waiting.push(waiter)
      })
    } else {
      this.#shed++
      throw requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 })
    }
    try {
      return await task()
    } finally {
      const next = this.#waiting.shift()
      if (next === undefined) {
        this.#running--
      } else {
        clearTimeout(next.timer)
        next.resolve()
      }
    }
  }
}

interface Waiter {
  resolve: () => void
  timer: NodeJS.Timeout | undefined
}

/**
 * One hash more than there are cores, so a core never idles while the event loop hands it the next
 * hash (measured: 9 % of the CPU idle during a login flood with one per core); but always one libuv
 * thread fewer than the pool has, so file system, DNS and crypto work never waits for a whole hash.
 */
export function defaultHashConcurrency (threadPoolSize = Number(process.env.UV_THREADPOOL_SIZE) || 4): number {
  return Math.max(1, Math.min(availableParallelism() + 1, threadPoolSize - 1))
}
