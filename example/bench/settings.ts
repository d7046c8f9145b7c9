import { availableParallelism } from 'node:os'
import { defaultHashConcurrency } from '../../lib/hash-queue.js'

/**
 * What the bench's processes agree on: the accounts the server seeds, the password they share and the
 * token secret. Bench-only values; nothing here is a default of the plugin.
 */
export const BENCH_SECRET = 'fastify-password-auth-bench-secret-not-for-production'
export const BENCH_PASSWORD = 'correct horse battery staple, benchmarked'
export const WRONG_PASSWORD = 'correct horse battery staple, mistyped!!'

/** Seeded active accounts: user0@bench.test … with ids u0 …, and inactive ones for the enumeration run. */
export const ACTIVE_ACCOUNTS = 2000
export const INACTIVE_ACCOUNTS = 500

export const activeEmail = (i: number): string => `user${i % ACTIVE_ACCOUNTS}@bench.test`
export const activeId = (i: number): string => `u${i % ACTIVE_ACCOUNTS}`
export const inactiveEmail = (i: number): string => `inactive${i % INACTIVE_ACCOUNTS}@bench.test`

/** How the server process runs: its libuv thread pool, the plugin's hashing concurrency, thread priorities. */
export interface Profile {
  name: 'defaults' | 'tuned'
  description: string
  threadPoolSize: number
  /** argon2 operations at once (the plugin's `hashing.concurrency`). */
  hashConcurrency: number
  /** Nice value for every server thread but the event loop (Linux); unset: unchanged. */
  helperNice?: number
  /** The server's environment for this profile. */
  env: Record<string, string>
}

/**
 * - defaults: the plugin without `hashing` options, UV_THREADPOOL_SIZE = cores + 1 (BENCH_THREADPOOL_SIZE
 *   overrides it), the README's advice. The plugin then runs min(cores, pool − 1) = cores hashes at once
 *   and one pool thread stays free for file system, DNS and async crypto work.
 * - tuned: one hash more than cores in flight (`hashing.concurrency = cores + 1`, pool = cores + 2, still
 *   one free thread), so a core never waits for the event loop to hand it the next hash; and on Linux the
 *   helper threads at nice 19, so the event loop gets a core at once while argon2 keeps every cycle the
 *   loop leaves.
 */
export function profiles (env: NodeJS.ProcessEnv = process.env): Record<Profile['name'], Profile> {
  const cores = availableParallelism()
  const configured = Number(env.BENCH_THREADPOOL_SIZE)
  const defaultPool = Number.isSafeInteger(configured) && configured > 0 ? configured : cores + 1
  const tunedNice = process.platform === 'linux' ? 19 : undefined
  return {
    defaults: {
      name: 'defaults',
      description: `plugin defaults, UV_THREADPOOL_SIZE=${defaultPool}`,
      threadPoolSize: defaultPool,
      hashConcurrency: defaultHashConcurrency(defaultPool),
      env: { UV_THREADPOOL_SIZE: String(defaultPool) }
    },
    tuned: {
      name: 'tuned',
      description: `hashing.concurrency=${cores + 1}, UV_THREADPOOL_SIZE=${cores + 2}${tunedNice === undefined ? '' : `, helper threads at nice ${tunedNice}`}`,
      threadPoolSize: cores + 2,
      hashConcurrency: cores + 1,
      helperNice: tunedNice,
      env: {
        UV_THREADPOOL_SIZE: String(cores + 2),
        BENCH_HASH_CONCURRENCY: String(cores + 1),
        ...(tunedNice === undefined ? {} : { BENCH_HELPER_NICE: String(tunedNice) })
      }
    }
  }
}
