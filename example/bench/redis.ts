/** The shared Redis, used only under this run's own key prefix. */
import { Redis } from 'ioredis'

export async function connectRedis (url: string): Promise<Redis | undefined> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.ping()
    return client
  } catch {
    client.disconnect()
    return undefined
  }
}

/** Deletes the keys under `prefix` (this run's, and only those). */
export async function dropKeys (client: Redis, prefix: string): Promise<number> {
  let cursor = '0'
  let dropped = 0
  do {
    const [nextCursor, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    cursor = nextCursor
    if (keys.length > 0) dropped += await client.unlink(...keys)
  } while (cursor !== '0')
  return dropped
}
