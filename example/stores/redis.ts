import { Redis } from 'ioredis'
import { RedisAttemptStore, RedisOneTimeTokenStore, RedisSessionStore, RedisTrustedDeviceStore } from '../../lib/stores/redis/index.js'
import { checkRedisPersistence } from './redis-persistence.js'
import type { StoreLogger } from './types.js'

/** Sessions, attempt counters, one-time tokens and the per-IP limit in Redis, shared by every instance. */
export async function redisStores (url: string, logError: StoreLogger) {
  const client = new Redis(url, {
    // Bounded waits: while Redis is away, commands fail within a second instead of queueing.
    connectTimeout: 2000,
    commandTimeout: 1000,
    maxRetriesPerRequest: 1
  })
  let lastReport = 0
  client.on('error', (err) => {
    if (Date.now() - lastReport > 10_000) { lastReport = Date.now(); logError('Redis connection error', err) }
  })
  return {
    client,
    sessions: new RedisSessionStore({ client }),
    attempts: new RedisAttemptStore({ client }),
    oneTimeTokens: new RedisOneTimeTokenStore({ client }),
    trustedDevices: new RedisTrustedDeviceStore({ client }),
    healthCheck: async () => { await client.ping() },
    warnings: async () => await checkRedisPersistence(client),
    close: async () => { await client.quit().catch(() => client.disconnect()) }
  }
}
