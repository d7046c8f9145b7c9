import type { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import type { PasskeyStore } from '../../../lib/index.js'
import { createPostgresSchema, passkeysTableSql, PostgresPasskeyStore } from '../../../lib/stores/postgres/index.js'
import { RedisPasskeyStore } from '../../../lib/stores/redis/index.js'
import { passkeyStoreContract } from '../../../lib/stores/testing/index.js'
import { PASSWORD } from '../../helpers/app.js'
import { PASSKEYS, passkeyApp } from '../../helpers/passkeys.js'
import { deleteKeys, namespacePool, postgresSchema, postgresUnavailable, redisClient, redisUnavailable } from '../../helpers/services.js'

const PREFIX = `test:${process.pid}:${Date.now().toString(36)}:passkeys:`

t.test('PostgresPasskeyStore keeps the passkey store contract', { skip: postgresUnavailable }, async (t) => {
  for (const check of passkeyStoreContract({ create: async () => new PostgresPasskeyStore({ pool: await namespacePool(t, 'passkeys', passkeysTableSql()) }) })) {
    await t.test(check.name, check.run)
  }
})

t.test('RedisPasskeyStore keeps the passkey store contract', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, PREFIX) })
  for (const check of passkeyStoreContract({ create: async (namespace) => new RedisPasskeyStore({ client, prefix: `${PREFIX}${namespace}:` }) })) {
    await t.test(check.name, check.run)
  }
})

/**
 * A client whose commands go to two connections in turn, as two instances' would: one connection runs them in
 * the order they were sent, so only two can interleave an add's steps with a removal's as two instances do.
 */
function twoConnections (t: Test): Redis {
  const clients = [redisClient(t), redisClient(t)]
  let turn = 0
  return new Proxy(clients[0]!, {
    get (target, name) {
      const value = Reflect.get(target, name)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => (clients[turn++ % 2] as unknown as Record<string | symbol, (...args: unknown[]) => unknown>)[name]!(...args)
    }
  })
}

t.test('RedisPasskeyStore keeps the contract with its commands spread over two connections (two instances)', { skip: redisUnavailable }, async (t) => {
  const cleaner = redisClient(t)
  t.teardown(async () => { await deleteKeys(cleaner, `${PREFIX}two:`) })
  const client = twoConnections(t)
  for (const check of passkeyStoreContract({ create: async (namespace) => new RedisPasskeyStore({ client, prefix: `${PREFIX}two:${namespace}:` }) })) {
    await t.test(check.name, check.run)
  }
})

/**
 * Registers a passkey through the plugin on `store` and signs in with it; `dump` reads everything the store
 * holds. It must hold the public key and nothing that signs in: no private key, no challenge, and the user
 * handle is neither the account id nor the e-mail.
 */
async function checkAtRest (t: Test, store: PasskeyStore, dump: () => Promise<string>): Promise<void> {
  const { token, signIn, authenticator, ada, post } = await passkeyApp(t, { passkeys: { ...PASSKEYS, store } })
  const key = authenticator()
  const accessToken = await token()
  const options = (await post('/Passkeys/RegisterOptions', accessToken)).json()
  t.equal((await post('/Passkeys', accessToken, { response: key.create(options), password: PASSWORD })).statusCode, 201)
  t.equal((await signIn(key)).statusCode, 200)
  const stored = await dump()
  const privateKey = key.credentials[0]!.privateKey.export({ format: 'jwk' })
  t.notOk(stored.includes(privateKey.d!), 'no private key')
  t.ok(stored.includes(key.credentials[0]!.id), 'the credential id')
  t.notOk(stored.includes(options.challenge), 'no challenge')
  const handle = Buffer.from(options.user.id, 'base64url').toString('latin1')
  t.not(handle, ada.id)
  t.notOk(handle.includes(ada.email))
  const passkey = await store.get(key.credentials[0]!.id)
  t.same(Object.keys(passkey!).sort(), ['accountId', 'backedUp', 'backupEligible', 'counter', 'createdAt', 'id', 'lastUsedAt', 'name', 'publicKey', 'transports'])
  t.equal(passkey!.counter, 1, 'the counter of the last use')
}

t.test('PostgreSQL holds only public material of a passkey', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'passkeys_at_rest')
  await createPostgresSchema(pool)
  await checkAtRest(t, new PostgresPasskeyStore({ pool }), async () => {
    const rows = await pool.query('SELECT * FROM auth_passkeys')
    t.same(rows.fields.map((f) => f.name).sort(), ['account_id', 'backed_up', 'backup_eligible', 'counter', 'created_at', 'credential_id', 'last_used_at', 'name', 'public_key', 'transports'])
    return JSON.stringify([rows.rows, (await pool.query('SELECT * FROM auth_passkeys_handles')).rows])
  })
})

t.test('Redis holds only public material of a passkey', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  const prefix = `${PREFIX}at-rest:`
  t.teardown(async () => { await deleteKeys(client, prefix) })
  await checkAtRest(t, new RedisPasskeyStore({ client, prefix }), async () => {
    const keys = await client.keys(`${prefix}*`)
    const values = await Promise.all(keys.map(async (key) => {
      const type = await client.type(key)
      return type === 'hash' ? await client.hgetall(key) : type === 'zset' ? await client.zrange(key, '0', '-1') : await client.get(key)
    }))
    return JSON.stringify([keys, values])
  })
})

/** Ten registrations, each racing admin.removePasskeys through the routes on `store`: after both, nothing signs in. */
async function raceRemovals (t: Test, store: PasskeyStore): Promise<void> {
  const { app, token, authenticator, ada, post, signIn } = await passkeyApp(t, { passkeys: { ...PASSKEYS, store } })
  const answers: number[] = []
  for (let round = 0; round < 10; round++) {
    const accessToken = await token()
    const key = authenticator()
    const options = (await post('/Passkeys/RegisterOptions', accessToken)).json()
    const [added] = await Promise.all([
      post('/Passkeys', accessToken, { response: key.create(options), password: PASSWORD }),
      // Later each round, so the removal lands at different steps of the registration.
      (async () => { await new Promise((resolve) => setTimeout(resolve, round * 3)); await app.passwordAuth.admin.removePasskeys(ada.id, { admin: 'race' }) })()
    ])
    answers.push(added.statusCode)
    t.same(await store.list(ada.id), [], `round ${round}: no passkey after the removal (answered ${added.statusCode})`)
    t.equal((await signIn(key)).statusCode, 401, `round ${round}: the late passkey signs nobody in`)
  }
  t.ok(answers.every((status) => [201, 400, 401].includes(status)), answers.join(' '))
}

t.test('PostgreSQL: a registration racing admin.removePasskeys never leaves a passkey', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'passkeys_race')
  await createPostgresSchema(pool)
  await raceRemovals(t, new PostgresPasskeyStore({ pool }))
})

t.test('Redis: a registration racing admin.removePasskeys never leaves a passkey', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  const prefix = `${PREFIX}race:`
  t.teardown(async () => { await deleteKeys(client, prefix) })
  await raceRemovals(t, new RedisPasskeyStore({ client, prefix }))
})
