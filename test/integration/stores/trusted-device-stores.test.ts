import t, { type Test } from 'tap'
import type { TrustedDeviceStore } from '../../../lib/index.js'
import { PostgresTrustedDeviceStore, trustedDevicesTableSql } from '../../../lib/stores/postgres/index.js'
import { RedisTrustedDeviceStore } from '../../../lib/stores/redis/index.js'
import { trustedDeviceStoreContract } from '../../../lib/stores/testing/index.js'
import { EMAIL, PASSWORD } from '../../helpers/app.js'
import { mfaApp } from '../../helpers/mfa.js'
import { deleteKeys, postgresSchema, postgresUnavailable, redisClient, redisUnavailable } from '../../helpers/services.js'

const PREFIX = `test:trusted:${process.pid}:${Date.now().toString(36)}:`
const DAY_MS = 86_400_000

t.test('the PostgreSQL trusted-device store keeps the store contract', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'trusted')
  const checks = trustedDeviceStoreContract({
    create: async (namespace) => {
      await pool.query({ text: trustedDevicesTableSql(namespace) })
      return new PostgresTrustedDeviceStore({ pool, table: namespace })
    }
  })
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('PostgreSQL: the table holds a keyed hash, never a device token; ended trusts are pruned', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'trusted_rows')
  await pool.query({ text: trustedDevicesTableSql() })
  await pool.query({ text: trustedDevicesTableSql() }) // idempotent
  const store = new PostgresTrustedDeviceStore({ pool })
  await store.trust('a-1', { id: 'id-1', deviceHash: 'kid.hash-1', label: 'Chrome on macOS' }, DAY_MS, 0)
  await store.trust('a-1', { id: 'id-2', deviceHash: 'kid.hash-2', label: 'Safari on iOS' }, 1, 0)
  await store.trust('a-2', { id: 'id-3', deviceHash: 'kid.hash-3', label: 'Firefox on Linux' }, DAY_MS, 0)
  const { rows } = await pool.query('SELECT * FROM auth_trusted_devices ORDER BY id')
  t.same(Object.keys(rows[0]).sort(), ['account_id', 'created_at', 'device_hash', 'generation', 'id', 'label', 'last_used_at', 'trusted_until'])
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(await store.endAll('a-2'), 1)
  t.same((await pool.query("SELECT id FROM auth_trusted_devices WHERE account_id = 'a-2'")).rows, [], 'endAll deletes the rows it ended')
  t.equal(await store.prune(), 1, 'the expired trust')
  t.same((await pool.query('SELECT id FROM auth_trusted_devices')).rows, [{ id: 'id-1' }])
})

t.test('the Redis trusted-device store keeps the store contract', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  const checks = trustedDeviceStoreContract({ create: async (namespace) => new RedisTrustedDeviceStore({ client, prefix: `${PREFIX}${namespace}:` }) })
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('Redis: one hash per account in one slot, kept a day past its longest trust, holding keyed hashes only', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  const store = new RedisTrustedDeviceStore({ client, prefix: `${PREFIX}layout:` })
  await store.trust('a-1', { id: 'id-1', deviceHash: 'kid.hash-1', label: 'Chrome\ton macOS' }, 30 * DAY_MS, 0)
  const key = `${PREFIX}layout:{a-1}`
  t.same(await client.keys(`${PREFIX}layout:*`), [key])
  t.equal(await client.type(key), 'hash')
  t.same(Object.keys(await client.hgetall(key)).sort(), ['g', 't:kid.hash-1'])
  const ttl = await client.pttl(key)
  t.ok(ttl > 31 * DAY_MS - 60_000 && ttl <= 31 * DAY_MS, `kept a day past the trust (${ttl} ms)`)
  t.match(await store.list('a-1'), [{ id: 'id-1', label: 'Chrome\ton macOS' }], 'a label with a tab survives')
  await store.endAll('a-1')
  t.same(Object.keys(await client.hgetall(key)), ['g'], 'only the generation stays')
  t.ok(await client.pttl(key) > DAY_MS - 60_000, 'for a day at least')
})

/** A device trusted through the routes on `store`; what the store then holds names neither the device id nor its token. */
async function checkAtRest (t: Test, store: TrustedDeviceStore, dump: () => Promise<string>): Promise<void> {
  const { enable, app, login } = await mfaApp(t, { mfa: { trustDays: 30, trustedDevices: store } })
  const { recoveryCodes } = await enable()
  const answer = await app.inject({ method: 'POST', url: '/Auth/LoginMfa', payload: { mfaToken: (await login()).json().mfaToken, code: recoveryCodes[0], rememberDevice: true } })
  const { deviceToken } = answer.json()
  const again = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD, deviceToken } })
  t.type(again.json().accessToken, 'string', 'trusted through this store')
  const held = await dump()
  t.match(held, /\.[\w-]{43}/, 'a keyed hash is there')
  t.notOk(held.includes(deviceToken.split('.')[0]), 'not the device id')
  t.notOk(held.includes(deviceToken.split('.')[2]), 'nor any part of the device token')
}

t.test('PostgreSQL: a trusted device at rest is a keyed hash', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'trusted_at_rest')
  await pool.query({ text: trustedDevicesTableSql() })
  await checkAtRest(t, new PostgresTrustedDeviceStore({ pool }), async () => JSON.stringify((await pool.query('SELECT * FROM auth_trusted_devices')).rows))
})

t.test('Redis: a trusted device at rest is a keyed hash', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  const prefix = `${PREFIX}at-rest:`
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  await checkAtRest(t, new RedisTrustedDeviceStore({ client, prefix }), async () => {
    const keys = await client.keys(`${prefix}*`)
    return JSON.stringify(await Promise.all(keys.map(async (key) => [key, await client.hgetall(key)])))
  })
})
