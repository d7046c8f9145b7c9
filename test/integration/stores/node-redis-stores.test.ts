import { Redis } from 'ioredis'
import { createClient } from 'redis'
import t from 'tap'
import {
  RedisAttemptStore, RedisMfaStore, RedisOneTimeTokenStore, RedisPasskeyStore, RedisSessionStore, RedisTrustedDeviceStore
} from '../../../lib/stores/redis/index.js'
import {
  attemptStoreContract, CONTRACT_THROTTLE_POLICY, mfaStoreContract, oneTimeTokenStoreContract, passkeyStoreContract, sessionStoreContract,
  trustedDeviceStoreContract
} from '../../../lib/stores/testing/index.js'
import { PrivateRedis } from '../../helpers/private-redis.js'
import { deleteKeys, REDIS_URL, redisClient, redisUnavailable } from '../../helpers/services.js'
import type { Teardown } from '../../helpers/teardown.js'

// The Redis stores with node-redis v5 (`redis`) instead of ioredis: the same contract suites, on the shared Redis.
const PREFIX = `test:node-redis:${process.pid}:${Date.now().toString(36)}:`

async function nodeRedis (t: Teardown, url = REDIS_URL) {
  const client = createClient({ url })
  client.on('error', () => {})
  await client.connect()
  t.teardown(async () => { if (client.isOpen) await client.close() })
  return client
}

t.test('every Redis store keeps its contract on a node-redis client', { skip: redisUnavailable }, async (t) => {
  const client = await nodeRedis(t)
  const cleaner = redisClient(t)
  t.teardown(async () => { await deleteKeys(cleaner, PREFIX) })
  const prefix = (namespace: string): string => `${PREFIX}${namespace}:`
  const checks = [
    ...sessionStoreContract({ create: async (namespace) => new RedisSessionStore({ client, prefix: prefix(namespace) }) }),
    ...attemptStoreContract({ create: async (namespace) => new RedisAttemptStore({ client, prefix: prefix(namespace) }) }),
    ...oneTimeTokenStoreContract({ create: async (namespace) => new RedisOneTimeTokenStore({ client, prefix: prefix(namespace) }) }),
    ...mfaStoreContract({ create: async (namespace) => new RedisMfaStore({ client, prefix: prefix(namespace) }) }),
    ...passkeyStoreContract({ create: async (namespace) => new RedisPasskeyStore({ client, prefix: prefix(namespace) }) }),
    ...trustedDeviceStoreContract({ create: async (namespace) => new RedisTrustedDeviceStore({ client, prefix: prefix(namespace) }) })
  ]
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('a script the server forgot (a restart, a failover, SCRIPT FLUSH) is sent again in full, with either client', { skip: redisUnavailable }, async (t) => {
  const redis = await PrivateRedis.create(t) // SCRIPT FLUSH on a server of the test's own, never the shared one
  await redis.start()
  const ioredis = new Redis(redis.url)
  t.teardown(() => { ioredis.disconnect() })
  const clients = { ioredis, 'node-redis': await nodeRedis(t, redis.url) }
  for (const [name, client] of Object.entries(clients)) {
    const store = new RedisAttemptStore({ client, prefix: `${name}:` })
    await ioredis.script('FLUSH')
    t.ok((await store.reserve('k', 't1', CONTRACT_THROTTLE_POLICY)).granted, `${name}: runs after a flush`)
    t.equal(await store.settle('k', 't1', 'failure', CONTRACT_THROTTLE_POLICY), 0, `${name}: and by SHA after that`)
    t.equal(await ioredis.hget(`${name}:{k}:state`, 'failures'), '1')
  }
})

t.test('the stores never close the node-redis client they were given', { skip: redisUnavailable }, async (t) => {
  const client = await nodeRedis(t)
  await new RedisSessionStore({ client, prefix: `${PREFIX}open:` }).get('x')
  t.equal(client.isReady, true)
  t.equal(await client.ping(), 'PONG')
})
