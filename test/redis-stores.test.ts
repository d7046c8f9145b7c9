import t from 'tap'
import { RedisAttemptStore, RedisRevocationStore } from '../lib/redis.js'
import { attemptStoreContract, CONTRACT_THROTTLE_POLICY, revocationStoreContract } from '../lib/testing/index.js'
import { deleteKeys, redisClient, redisUnavailable } from './helpers/services.js'

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
    ...revocationStoreContract({ create: async (namespace) => new RedisRevocationStore({ client, prefix: `${PREFIX}${namespace}:` }) }),
    ...attemptStoreContract({ create: async (namespace) => new RedisAttemptStore({ client, prefix: `${PREFIX}${namespace}:` }) })
  ]
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('revocations expire with their token in Redis itself', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  const store = new RedisRevocationStore({ client, prefix: `${PREFIX}ttl:` })
  const until = Date.now() + 60_000
  await store.revoke('abc', until)
  const ttl = await client.pttl(`${PREFIX}ttl:abc`)
  t.ok(ttl > 55_000 && ttl <= 60_000, `key expires with the token (${ttl} ms)`)
})

t.test('the two keys of an attempt counter share a Cluster hash slot', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  const store = new RedisAttemptStore({ client, prefix: `${PREFIX}slot:` })
  const reservation = await store.reserve('q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN', CONTRACT_THROTTLE_POLICY)
  t.ok(reservation.granted)
  if (reservation.granted) await store.settle('q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN', reservation.ticket, 'failure', CONTRACT_THROTTLE_POLICY)
  await store.reserve('q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN', CONTRACT_THROTTLE_POLICY) // leaves an open lease
  const keys = (await client.keys(`${PREFIX}slot:*`)).sort()
  t.same(keys, [`${PREFIX}slot:{q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN}:leases`, `${PREFIX}slot:{q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN}:state`])
  t.same(new Set(keys.map(hashTag)), new Set(['q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN']), 'one hash tag, so one slot')
  const stateTtl = await client.pttl(`${PREFIX}slot:{q6R0sXvDqk7rQyH7hY2dNwq6R0sXvDqk7rQyH7hY2dN}:state`)
  t.ok(stateTtl > 0 && stateTtl <= CONTRACT_THROTTLE_POLICY.forgetAfterMs, `counters expire when forgotten (${stateTtl} ms)`)
})

t.test('the scripts are defined once per client, and stores on one client stay apart', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  const first = new RedisAttemptStore({ client, prefix: `${PREFIX}one:` })
  const reserve = (client as unknown as Record<string, unknown>).fastifyPasswordAuthReserve
  t.type(reserve, 'function')
  const second = new RedisAttemptStore({ client, prefix: `${PREFIX}two:` })
  t.equal((client as unknown as Record<string, unknown>).fastifyPasswordAuthReserve, reserve, 'not redefined')
  for (let i = 0; i < CONTRACT_THROTTLE_POLICY.freeFailures; i++) {
    const reservation = await first.reserve('k', CONTRACT_THROTTLE_POLICY)
    if (reservation.granted) await first.settle('k', reservation.ticket, 'failure', CONTRACT_THROTTLE_POLICY)
  }
  t.equal((await first.reserve('k', CONTRACT_THROTTLE_POLICY)).granted, false)
  t.equal((await second.reserve('k', CONTRACT_THROTTLE_POLICY)).granted, true)
})

t.test('the stores never close the client they were given', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  const store = new RedisRevocationStore({ client, prefix: `${PREFIX}open:` })
  await store.isRevoked('x')
  t.equal(client.status, 'ready')
  t.equal(await client.ping(), 'PONG')
})
