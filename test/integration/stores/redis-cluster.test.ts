import { createHash, randomUUID } from 'node:crypto'
import type { Cluster } from 'ioredis'
import { createCluster } from 'redis'
import t from 'tap'
import type { MemoryAccountStore } from '../../../lib/index.js'
import type { RedisClient } from '../../../lib/stores/redis/client.js'
import { RedisAttemptStore, RedisMfaStore, RedisOneTimeTokenStore, RedisPasskeyStore, RedisSessionStore, RedisTrustedDeviceStore } from '../../../lib/stores/redis/index.js'
import {
  attemptStoreContract, CONTRACT_THROTTLE_POLICY, mfaStoreContract, oneTimeTokenStoreContract, passkeyStoreContract, sessionStoreContract, trustedDeviceStoreContract,
  type ContractCheck
} from '../../../lib/stores/testing/index.js'
import { buildTestApp, EMAIL, type TestApp } from '../../helpers/app.js'
import { redisClusterUnavailable, startRedisCluster } from '../../helpers/redis-cluster.js'

t.setTimeout(240_000) // the whole file: cluster start-up plus every contract on both clients, on a loaded machine

type Prefix = (namespace: string) => string

/** Every Redis store and its contract suite; a new store is one more line. */
const STORES: Array<{ name: string, contract: (client: RedisClient, prefix: Prefix) => ContractCheck[] }> = [
  { name: 'RedisSessionStore', contract: (client, prefix) => sessionStoreContract({ create: async (ns) => new RedisSessionStore({ client, prefix: prefix(ns) }) }) },
  { name: 'RedisAttemptStore', contract: (client, prefix) => attemptStoreContract({ create: async (ns) => new RedisAttemptStore({ client, prefix: prefix(ns) }) }) },
  { name: 'RedisOneTimeTokenStore', contract: (client, prefix) => oneTimeTokenStoreContract({ create: async (ns) => new RedisOneTimeTokenStore({ client, prefix: prefix(ns) }) }) },
  { name: 'RedisMfaStore', contract: (client, prefix) => mfaStoreContract({ create: async (ns) => new RedisMfaStore({ client, prefix: prefix(ns) }) }) },
  { name: 'RedisPasskeyStore', contract: (client, prefix) => passkeyStoreContract({ create: async (ns) => new RedisPasskeyStore({ client, prefix: prefix(ns) }) }) },
  { name: 'RedisTrustedDeviceStore', contract: (client, prefix) => trustedDeviceStoreContract({ create: async (ns) => new RedisTrustedDeviceStore({ client, prefix: prefix(ns) }) }) }
]

// Nearly every attempt check uses the key 'key', whose hash tag pins it to one slot whatever the plain
// prefix. Hash-tagging the namespace puts each check's store on a slot of its own, spreading the checks
// over all nodes; plain prefixes leave the stores' own hash tags in charge (the default setup).
const LAYOUTS: Array<{ name: string, prefix: Prefix }> = [
  { name: 'plain prefixes', prefix: (ns) => `${ns}:` },
  { name: 'a hash-tagged namespace per store', prefix: (ns) => `{${ns}}:` }
]

const cluster = redisClusterUnavailable === false ? await startRedisCluster(t) : undefined

for (const layout of LAYOUTS) {
  for (const store of STORES) {
    t.test(`${store.name} keeps its contract on a Redis Cluster (${layout.name})`, { skip: redisClusterUnavailable }, async (t) => {
      const client = cluster!.client()
      for (const check of store.contract(client, layout.prefix)) await t.test(check.name, check.run)
    })
  }
}

// node-redis's cluster client (createCluster) routes each command by its first key, as the stores' scripts need.
for (const store of STORES) {
  t.test(`${store.name} keeps its contract on a Redis Cluster through node-redis (plain prefixes)`, { skip: redisClusterUnavailable }, async (t) => {
    const client = createCluster({ rootNodes: cluster!.ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })) })
    client.on('error', () => {})
    await client.connect()
    t.teardown(async () => { await client.close() })
    for (const check of store.contract(client, LAYOUTS[0]!.prefix)) await t.test(check.name, check.run)
  })
}

t.test('attempt counters: one slot per e-mail, e-mails spread over the nodes, scripts run on each', { skip: redisClusterUnavailable }, async (t) => {
  const client = cluster!.client()
  const store = new RedisAttemptStore({ client, prefix: 'spread:' })
  const policy = CONTRACT_THROTTLE_POLICY
  // The keys the plugin uses: sha256 of the normalised e-mail, base64url.
  const emailKeys = Array.from({ length: 12 }, (_, i) => createHash('sha256').update(`user${i}@example.com`).digest('base64url'))

  const open = new Map<string, string>()
  for (const key of emailKeys) {
    for (let i = 0; i < policy.freeFailures - 1; i++) {
      const ticket = randomUUID()
      t.ok((await store.reserve(key, ticket, policy)).granted, 'a free attempt is granted')
      await store.settle(key, ticket, 'failure', policy)
    }
    const ticket = randomUUID()
    if ((await store.reserve(key, ticket, policy)).granted) open.set(key, ticket) // left open: both keys now exist
  }
  t.equal(open.size, emailKeys.length, 'the last free attempt of every e-mail is granted')

  const nodeOf = await keysByNode(client, 'spread:*')
  for (const key of emailKeys) {
    const [state, leases] = [`spread:{${key}}:state`, `spread:{${key}}:leases`]
    t.ok(nodeOf.has(state) && nodeOf.has(leases), 'both keys exist')
    t.equal(nodeOf.get(state), nodeOf.get(leases), 'both keys on one node')
    t.equal(await client.cluster('KEYSLOT', state), await client.cluster('KEYSLOT', leases), 'both keys in one slot')
  }
  const nodes = new Set(nodeOf.values())
  t.ok(nodes.size >= 2, `the e-mails spread over ${nodes.size} of ${cluster!.ports.length} nodes`)

  for (const [key, ticket] of open) await store.settle(key, ticket, 'failure', policy)
  for (const key of emailKeys) {
    const reservation = await store.reserve(key, randomUUID(), policy)
    t.equal(reservation.granted, false, 'blocked after the free failures, whichever node holds it')
  }
})

t.test('two instances on their own Cluster clients share sessions, attempt counters and the per-IP limit', { skip: redisClusterUnavailable }, async (t) => {
  // Each instance has its own Cluster client, as two processes would; they share one account store.
  const instance = async (accounts?: MemoryAccountStore): Promise<TestApp> => {
    const client = cluster!.client()
    return await buildTestApp(t, {
      auth: {
        ...(accounts === undefined ? {} : { accounts }),
        sessions: new RedisSessionStore({ client, prefix: 'app:sessions:' }),
        attempts: new RedisAttemptStore({ client, prefix: 'app:attempts:' }),
        throttle: { freeFailures: 2 },
        rateLimit: { max: 5, timeWindow: 60_000, redis: client, nameSpace: 'app:rate:' }
      }
    })
  }
  const a = await instance()
  const b = await instance(a.accounts)

  const token = await a.token() // per-IP: 1
  t.equal((await b.me(token)).statusCode, 200)
  t.equal((await b.logout(token)).statusCode, 204)
  t.equal((await a.me(token)).statusCode, 401, 'logout on B is seen by A')
  t.equal((await a.login(EMAIL, 'wrong on A')).statusCode, 401) // 2
  t.equal((await b.login(EMAIL, 'wrong on B')).statusCode, 401) // 3
  t.equal((await a.login()).statusCode, 429, 'the two failures, one per instance, block the e-mail on both') // 4
  t.equal((await b.login('other@example.com', 'another guess')).statusCode, 401) // 5
  const limited = await a.login('other@example.com', 'another guess') // 6
  t.equal(limited.statusCode, 429, 'the per-IP limit counts across instances')
  t.equal(limited.json().code, 'FST_PWAUTH_TOO_MANY_ATTEMPTS')
})

/** Where each key matching `pattern` lives: its master's port, found by scanning every master. */
async function keysByNode (client: Cluster, pattern: string): Promise<Map<string, number>> {
  const located = new Map<string, number>()
  for (const node of client.nodes('master')) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500)
      for (const key of keys) located.set(key, node.options.port!)
      cursor = next
    } while (cursor !== '0')
  }
  return located
}
