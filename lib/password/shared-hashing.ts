import { createHash } from 'node:crypto'
import { HashPool, type HashPoolOptions } from './hash-pool.js'
import { HashQueue } from './hash-queue.js'

/** A registration's hold on the hashing threads and the queue in front of them. */
export interface HashingLease {
  queue: HashQueue
  pool: HashPool
  /** The last registration to let go closes the pool (Fastify's close()). */
  release: () => Promise<void>
}

export interface SharedHashingOptions extends Omit<HashPoolOptions, 'threads'> {
  threads: number
  maxQueue: number
}

interface Entry { queue: HashQueue, pool: HashPool, users: number }

const entries = new Map<string, Entry>()

/** The pepper only as a digest: the key outlives no secret of its own. */
function keyOf ({ threads, maxQueue, workerData: { params, pepper, bcryptModule }, worker }: SharedHashingOptions): string {
  const pepperDigest = pepper === undefined ? null : createHash('sha256').update(pepper).digest('base64')
  return JSON.stringify([threads, maxQueue, params, pepperDigest, bcryptModule, worker?.href ?? null])
}

/**
 * Registrations in one process with the same hashing and argon2 options (an API and a browser app beside
 * it, say) share one pool of threads and one queue: each idle thread holds about 9 MB, and two pools of a
 * thread per core would run twice as many hashes as there are cores. Sharing the queue too keeps its
 * promise that a task holding a slot starts on a thread at once. Its counts (running, waiting, shed) are
 * then the process's, each registration's own counts of hashes and verifications stay its own.
 * The pool's failures are logged with the first registration's logger.
 */
export function leaseHashing (options: SharedHashingOptions): HashingLease {
  const key = keyOf(options)
  let entry = entries.get(key)
  if (entry === undefined) {
    const { threads, maxQueue, ...poolOptions } = options
    entry = { queue: new HashQueue(threads, maxQueue), pool: new HashPool({ threads, ...poolOptions }), users: 0 }
    entries.set(key, entry)
  }
  const held = entry
  held.users++
  let released = false
  return {
    queue: held.queue,
    pool: held.pool,
    release: async () => {
      if (released) return
      released = true
      if (--held.users > 0) return
      if (entries.get(key) === held) entries.delete(key)
      await held.pool.close()
    }
  }
}
