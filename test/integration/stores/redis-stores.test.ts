import t from 'tap'
import { RedisAttemptStore, RedisMfaStore, RedisOneTimeTokenStore, RedisSessionStore } from '../../../lib/stores/redis/index.js'
import { attemptStoreContract, CONTRACT_SESSION_POLICY, CONTRACT_THROTTLE_POLICY, mfaStoreContract, oneTimeTokenStoreContract, sessionStoreContract } from '../../../lib/stores/testing/index.js'
import { deleteKeys, redisClient, redisUnavailable } from '../../helpers/services.js'

const PREFIX = `test:${process.pid}:${Date.now().toString(36)}:`

/** What Redis Cluster hashes to pick a key's slot: the first non-empty {…} section, else the whole key. */
function hashTag (key: string): string {
  const open = key.indexOf('{')
  const close = key.indexOf('}', open + 1)
  return open !== -1 && close > open + 1 ? key.slice(open + 1, close) : key
}

t.test('Redis stores keep the store contract', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  const checks = [
    ...sessionStoreContract({ create: async (namespace) => new RedisSessionStore({ client, prefix: `${PREFIX}${namespace}:` }) }),
    ...attemptStoreContract({ create: async (namespace) => new RedisAttemptStore({ client, prefix: `${PREFIX}${namespace}:` }) }),
    ...oneTimeTokenStoreContract({ create: async (namespace) => new RedisOneTimeTokenStore({ client, prefix: `${PREFIX}${namespace}:` }) }),
    ...mfaStoreContract({ create: async (namespace) => new RedisMfaStore({ client, prefix: `${PREFIX}${namespace}:` }) })
  ]
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('a session lives in one hash slot and expires on the Redis server\'s clock', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  const store = new RedisSessionStore({ client, prefix: `${PREFIX}ttl:` })
  const policy = { ...CONTRACT_SESSION_POLICY, idleMs: 60_000, maxMs: 120_000 }
  await store.create({ id: 'q6R0sXvDqk7rQyH7hY2dNw', accountId: 'a-1', credentialVersion: 0, keyId: 'k', ip: '', userAgent: '' }, policy)
  const ttl = await client.pttl(`${PREFIX}ttl:{q6R0sXvDqk7rQyH7hY2dNw}`)
  t.ok(ttl > 55_000 && ttl <= 60_000, `the session expires at its idle limit (${ttl} ms)`)
  t.ok(await client.pttl(`${PREFIX}ttl:account:{a-1}`) > 115_000, 'the account index outlives its sessions')
  t.equal(await store.end('q6R0sXvDqk7rQyH7hY2dNw', 'logout'), 'a-1')
  const keys = (await client.keys(`${PREFIX}ttl:*`)).sort()
  t.same(keys, [`${PREFIX}ttl:account:{a-1}`, `${PREFIX}ttl:{q6R0sXvDqk7rQyH7hY2dNw}:ended`], 'an ended session leaves only its reason')
  t.equal(hashTag(keys[1]!), 'q6R0sXvDqk7rQyH7hY2dNw', 'in the session\'s slot')
  const endedTtl = await client.pttl(keys[1]!)
  t.ok(endedTtl > 55_000 && endedTtl <= 60_000, `the reason is kept as long as the session would have lived (${endedTtl} ms)`)
})

t.test('a session being created is never dropped from its account\'s index by a list or endAll in between', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  const store = new RedisSessionStore({ client, prefix: `${PREFIX}index:` })
  const session = { id: 'i6R0sXvDqk7rQyH7hY2dNw', accountId: 'a-2', credentialVersion: 0, keyId: 'k', ip: '', userAgent: '' }
  // Login writes the index entry, then the session: simulate a list and an endAll between the two.
  await client.zadd(`${PREFIX}index:account:{a-2}`, Date.now(), session.id)
  t.same(await store.list('a-2'), [])
  t.same(await store.endAll('a-2', 'ended_by_host'), [])
  await store.create(session, CONTRACT_SESSION_POLICY)
  t.same((await store.list('a-2')).map((s) => s.id), [session.id], 'still listed')
  t.same(await store.endAll('a-2', 'ended_by_host'), [session.id], 'and ended by a later endAll')
  // An entry of a session long gone is tidied away.
  await client.zadd(`${PREFIX}index:account:{a-2}`, Date.now() - 3_600_000, 'gone-long-ago')
  await store.list('a-2')
  t.same(await client.zrange(`${PREFIX}index:account:{a-2}`, '0', '-1'), [])
})

t.test('the two keys of an attempt counter share a Cluster hash slot', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  const store = new RedisAttemptStore({ client, prefix: `${PREFIX}slot:` })
  t.ok((await store.reserve('q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN', 't1', CONTRACT_THROTTLE_POLICY)).granted)
  await store.settle('q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN', 't1', 'failure', CONTRACT_THROTTLE_POLICY)
  await store.reserve('q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN', 't2', CONTRACT_THROTTLE_POLICY) // leaves an open lease
  const keys = (await client.keys(`${PREFIX}slot:*`)).sort()
  t.same(keys, [`${PREFIX}slot:{q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN}:leases`, `${PREFIX}slot:{q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN}:state`])
  t.same(new Set(keys.map(hashTag)), new Set(['q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN']), 'one hash tag, so one slot')
  const stateTtl = await client.pttl(`${PREFIX}slot:{q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN}:state`)
  t.ok(stateTtl > 0 && stateTtl <= CONTRACT_THROTTLE_POLICY.forgetAfterMs, `counters expire when forgotten (${stateTtl} ms)`)
})

t.test('stores on one client stay apart', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  const first = new RedisAttemptStore({ client, prefix: `${PREFIX}one:` })
  const second = new RedisAttemptStore({ client, prefix: `${PREFIX}two:` })
  for (let i = 0; i < CONTRACT_THROTTLE_POLICY.freeFailures; i++) {
    if ((await first.reserve('k', `t${i}`, CONTRACT_THROTTLE_POLICY)).granted) await first.settle('k', `t${i}`, 'failure', CONTRACT_THROTTLE_POLICY)
  }
  t.equal((await first.reserve('k', 'next', CONTRACT_THROTTLE_POLICY)).granted, false)
  t.equal((await second.reserve('k', 'next', CONTRACT_THROTTLE_POLICY)).granted, true)
})

t.test('the stores never close the client they were given', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  const store = new RedisSessionStore({ client, prefix: `${PREFIX}open:` })
  await store.get('x')
  t.equal(client.status, 'ready')
  t.equal(await client.ping(), 'PONG')
})
