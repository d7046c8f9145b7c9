import { availableParallelism } from 'node:os'
import { defaultHashThreads } from '../../lib/password/options.js'

/**
 * What the bench's processes agree on: the accounts the server seeds, the password they share and the
 * token secret. Bench-only values; nothing here is a default of the plugin.
 */
export const BENCH_SECRET = 'fastify-password-auth-bench-secret-not-for-production'
export const BENCH_PASSWORD = 'correct horse battery staple, benchmarked'
export const WRONG_PASSWORD = 'correct horse battery staple, mistyped!!'

/**
 * Seeded active accounts: user0@bench.test … and inactive ones for the enumeration run. Ids are UUIDs
 * (the PostgreSQL store's default id type) numbered like the e-mails.
 */
export const ACTIVE_ACCOUNTS = 2000
export const INACTIVE_ACCOUNTS = 500

const numberedUuid = (group: string, n: number): string => `00000000-0000-4000-${group}-${String(n).padStart(12, '0')}`
export const activeEmail = (i: number): string => `user${i % ACTIVE_ACCOUNTS}@bench.test`
export const activeId = (i: number): string => numberedUuid('8000', i % ACTIVE_ACCOUNTS)
export const inactiveEmail = (i: number): string => `inactive${i % INACTIVE_ACCOUNTS}@bench.test`
export const inactiveId = (i: number): string => numberedUuid('9000', i % INACTIVE_ACCOUNTS)

/**
 * The lifetime of the sessions POST /bench/sessions creates in either server (one Logout each). A memory store keeps
 * an ended session until its lifetime ends and every full collection marks it: with an hour, each server held the
 * hundreds of thousands of sessions of every earlier Logout run, a different number in each server and round, and
 * they cost every request of the process 15–26 % (example/bench/README.md, 2026-11-29). 30 s covers a run's set-up
 * and the run with room to spare (a session that idled out first would answer 401, counted as unexpected); the
 * memory store sweeps once a minute, so a server holds about the last minute and a half of them.
 */
export const BENCH_SESSION_POLICY = { idleMs: 30_000, maxMs: 30_000, graceMs: 0 } as const

/** How the server process runs: its libuv thread pool, the plugin's hashing threads, thread priorities. */
export interface Profile {
  name: 'defaults' | 'tuned'
  description: string
  /**
   * The server's UV_THREADPOOL_SIZE: the threads the hand-written login's argon2 runs on (and the
   * ceiling's). The plugin hashes on threads of its own.
   */
  threadPoolSize: number
  /** argon2 operations the plugin runs at once: its hashing threads (`hashing.threads`, unset: the cores). */
  hashThreads: number
  /** Nice value for every server thread but the event loop (Linux); unset: unchanged. */
  helperNice?: number
  /** The server's environment for this profile. */
  env: Record<string, string>
}

/**
 * - defaults: the plugin without `hashing` options (a hashing thread per core), and UV_THREADPOOL_SIZE =
 *   max(4, cores) for the hand-written login beside it, so that it too can hash on every core (Node's
 *   own default of 4 on up to 4 cores; BENCH_THREADPOOL_SIZE overrides it).
 * - tuned: the same, and on Linux every server thread but the event loop at nice 19, so the event loop
 *   gets a core at once while argon2 keeps every cycle the loop leaves.
 */
export function profiles (env: NodeJS.ProcessEnv = process.env): Record<Profile['name'], Profile> {
  const cores = availableParallelism()
  const configured = Number(env.BENCH_THREADPOOL_SIZE)
  const pool = Number.isSafeInteger(configured) && configured > 0 ? configured : Math.max(4, cores)
  const tunedNice = process.platform === 'linux' ? 19 : undefined
  const defaults: Profile = {
    name: 'defaults',
    description: `plugin defaults (${defaultHashThreads()} hashing threads), UV_THREADPOOL_SIZE=${pool} for the hand-written login`,
    threadPoolSize: pool,
    hashThreads: defaultHashThreads(),
    env: { UV_THREADPOOL_SIZE: String(pool) }
  }
  return {
    defaults,
    tuned: {
      ...defaults,
      name: 'tuned',
      description: `${defaults.description}${tunedNice === undefined ? '' : `, helper threads at nice ${tunedNice}`}`,
      helperNice: tunedNice,
      env: { ...defaults.env, ...(tunedNice === undefined ? {} : { BENCH_HELPER_NICE: String(tunedNice) }) }
    }
  }
}
