import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import { requestError } from '../common/errors.js'
import type { HashTask, HashWorkerData, VerifyResult } from './hash-tasks.js'
import { loadedThreadOf } from './thread-loaded.js'

/** A thread idle this long ends (down to one); the next burst starts it again, in tens of milliseconds. */
export const HASH_THREAD_IDLE_MS = 60_000

/** How long after a thread's word that it loaded close() waits before ending it (see close()). */
const LOADED_SETTLE_MS = 50
/** How long close() waits for its tasks and for threads still loading their modules (thread-loaded.ts) before it ends them anyway. */
export const CLOSE_LOAD_WAIT_MS = 5_000

/** The worker's file beside this one (dist/lib/password/hash-worker.js in the package). */
const WORKER = new URL('./hash-worker.js', import.meta.url)

export interface HashPoolOptions {
  /** Threads at most, each running one hash or verification at a time. */
  threads: number
  workerData: HashWorkerData
  log: { error: (details: object, message: string) => void }
  /** The worker's module (tests give one that crashes). */
  worker?: URL
}

/**
 * The plugin's own threads for argon2 and the built-in legacy formats (piscina), so that libuv's thread
 * pool (file system, DNS, zlib, async crypto) never waits behind a hash, however many are running.
 * One thread starts with the pool (registration makes the dummy hash on it, so a worker that cannot start
 * fails the registration); more start when every running one is busy, up to `threads`, and end after
 * HASH_THREAD_IDLE_MS idle. Idle threads do not keep the process alive, and close() ends them all.
 *
 * A task that fails here (a thread that crashed, a pool being closed) rejects with 503, and a crashed
 * thread is replaced. What is logged is the failure's name, code and message (the worker sends no
 * library text: hash-tasks.ts), never the task: it holds a password.
 */
export class HashPool {
  readonly threads: number
  readonly #pool: Piscina
  readonly #log: HashPoolOptions['log']
  /** The threads (ids) whose modules have loaded: only those can be ended safely. */
  readonly #loaded = new Set<number>()
  /** Tasks handed to piscina and not yet settled. */
  #tasks = 0
  #closing = false
  /** When the last thread said it was loaded (performance.now(): a test or host that moves Date.now() cannot stretch the wait). */
  #lastLoadedAt = 0

  /** Logs what failed and how, never a task (it holds a password). */
  readonly #logFailure = (err: unknown, what = 'a password-hashing thread failed'): void => {
    const { name, code, message } = (err ?? {}) as { name?: unknown, code?: unknown, message?: unknown }
    this.#log.error({ hashingError: { name, code, message: String(message).slice(0, 300) } }, `fastify-password-auth: ${what}`)
  }

  constructor ({ threads, workerData, log, worker = WORKER }: HashPoolOptions) {
    this.threads = threads
    this.#log = log
    this.#pool = new Piscina({
      // A path, not the URL: piscina turns a file: URL back into a path on every task (about 1.3 µs each).
      filename: fileURLToPath(worker),
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: HASH_THREAD_IDLE_MS,
      concurrentTasksPerWorker: 1,
      workerData,
      recordTiming: false
    })
    // A failure with no task to fail: without a listener piscina's 'error' event would be thrown.
    this.#pool.on('error', this.#logFailure)
    this.#pool.on('message', (message: unknown) => {
      const id = loadedThreadOf(message)
      if (id === undefined) return
      this.#loaded.add(id)
      this.#lastLoadedAt = performance.now()
      // Threads end when idle and start again: forget the ended ones.
      const live = new Set(this.#pool.threads.map((thread) => thread.threadId))
      for (const loaded of this.#loaded) if (!live.has(loaded)) this.#loaded.delete(loaded)
    })
  }

  /** Threads started now (at most `threads`). */
  get started (): number {
    return this.#pool.threads.length
  }

  // Not async: #run's promise is the only layer (each async wrapper costs the event loop more ticks per login).
  hash (password: string): Promise<string> {
    return this.#run({ kind: 'hash', password }) as Promise<string>
  }

  verify (task: Extract<HashTask, { kind: 'verify' }>): Promise<VerifyResult> {
    return this.#run(task) as Promise<VerifyResult>
  }

  /**
   * Lets running tasks finish, then ends every thread; later tasks are refused with 503. A thread still loading its
   * modules (one a burst started a moment ago, perhaps for a task that meanwhile ran elsewhere) is let finish loading
   * first: ending it then would abort the process. Tasks first, as a queued one can start a thread until it runs.
   */
  async close (): Promise<void> {
    this.#closing = true
    const deadline = performance.now() + CLOSE_LOAD_WAIT_MS
    const loading = (): boolean => this.#pool.threads.some((thread) => !this.#loaded.has(thread.threadId))
    while ((this.#tasks > 0 || loading()) && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    // The word is sent from inside the thread's module evaluation, which ends just after it: a thread ended in between
    // still aborts the process (once in CI, Node 22). A thread that spoke a moment ago gets a moment more.
    const settle = this.#lastLoadedAt + LOADED_SETTLE_MS - performance.now()
    if (settle > 0) await new Promise((resolve) => setTimeout(resolve, settle))
    await this.#pool.close()
  }

  async #run (task: HashTask): Promise<unknown> {
    // piscina would start a thread again for work that comes after close().
    if (this.#closing) throw requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 })
    this.#tasks++
    try {
      return await this.#pool.run(task)
    } catch (err) {
      if (!this.#closing) this.#logFailure(err, 'a password-hashing task failed; answered 503')
      throw requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 })
    } finally {
      this.#tasks--
    }
  }
}
