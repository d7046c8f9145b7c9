import type { ServerConfig } from '../config.js'
import { memoryStores } from './memory.js'
import type { ServerStores, StoreLogger } from './types.js'

export type { ServerStores } from './types.js'

/**
 * Memory by default; PostgreSQL (postgres://) or MySQL / MariaDB (mysql://) for accounts with DATABASE_URL; Redis for the shared state with REDIS_URL; everything in
 * one SQLite file with DATABASE_URL=sqlite:<file> (one process: config.ts refuses REDIS_URL beside it).
 * A client library is loaded only when its service is configured: unused, pg, mysql2 and ioredis would still take
 * about 10 MB of the server's memory.
 */
export async function createStores ({ databaseUrl, redisUrl }: Pick<ServerConfig, 'databaseUrl' | 'redisUrl'>, logError: StoreLogger): Promise<ServerStores> {
  if (databaseUrl?.startsWith('sqlite:') === true) return await (await import('./sqlite.js')).sqliteStores(databaseUrl)
  const base = databaseUrl === undefined
    ? memoryStores()
    : databaseUrl.startsWith('mysql:')
      ? await (await import('./mysql.js')).mysqlStores(databaseUrl)
      : await (await import('./postgres.js')).postgresStores(databaseUrl, logError)
  if (redisUrl === undefined) return base
  const redis = await (await import('./redis.js')).redisStores(redisUrl, logError)
  return {
    ...base,
    sessions: redis.sessions,
    attempts: redis.attempts,
    oneTimeTokens: redis.oneTimeTokens,
    trustedDevices: redis.trustedDevices,
    rateLimitRedis: redis.client,
    warnings: redis.warnings,
    healthCheck: async () => { await Promise.all([base.healthCheck(), redis.healthCheck()]) },
    close: async () => { await Promise.all([base.close(), redis.close()]) }
  }
}
