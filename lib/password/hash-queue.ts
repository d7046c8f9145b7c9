import { requestError } from '../common/errors.js'

/**
 * Runs password-hashing work with bounded concurrency and a bounded wait list. Work beyond both bounds is
 * shed at once with 503 instead of queueing without limit, so a flood of logins cannot grow memory or
 * latency without end. The plugin runs it with one slot per thread of its hashing pool, so a task that
 * has a slot starts on a thread at once: the wait list here is the only one, and `startBy` holds.
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

  /** Number of operations holding a slot (running). */
  get running (): number {
    return this.#running
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
