import { availableParallelism } from 'node:os'

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

/**
 * libuv thread pool size for the server and the ceiling: one thread per core plus one. The plugin runs
 * min(cores, pool − 1) hashes at once, so this is the smallest pool that lets it use every core while one
 * thread stays free for file system, DNS and async crypto work. BENCH_THREADPOOL_SIZE overrides it.
 */
export function threadPoolSize (env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.BENCH_THREADPOOL_SIZE)
  return Number.isSafeInteger(configured) && configured > 0 ? configured : availableParallelism() + 1
}
