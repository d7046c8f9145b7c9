import t from 'tap'
import { hashPassword } from '../../../lib/index.js'
import { createPostgresSchema, PostgresAccountStore } from '../../../lib/stores/postgres/index.js'
import { RedisAttemptStore, RedisSessionStore } from '../../../lib/stores/redis/index.js'
import { buildTestApp, changeBody, CHEAP_ARGON2, EMAIL, PASSWORD } from '../../helpers/app.js'
import { deleteKeys, postgresSchema, postgresUnavailable, redisClient, redisUnavailable } from '../../helpers/services.js'

t.test('the plugin on PostgreSQL and Redis: the per-IP limit is shared by every instance', { skip: postgresUnavailable || redisUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'shared')
  await createPostgresSchema(pool)
  const accounts = new PostgresAccountStore({ pool })
  await accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const prefix = `test:${process.pid}:${Date.now().toString(36)}:`
  const cleanup = redisClient(t)
  t.teardown(async () => { await deleteKeys(cleanup, prefix) })

  // Two instances, each with its own connections, as two processes would have.
  const instance = async () => {
    const client = redisClient(t)
    return await buildTestApp(t, {
      auth: {
        accounts: new PostgresAccountStore({ pool }),
        sessions: new RedisSessionStore({ client, prefix: `${prefix}sessions:` }),
        attempts: new RedisAttemptStore({ client, prefix: `${prefix}attempts:` }),
        rateLimit: { max: 3, timeWindow: 60_000, redis: client, nameSpace: `${prefix}rate:` }
      }
    })
  }
  const a = await instance()
  const b = await instance()

  const token = await a.token()
  t.equal((await b.me(token)).statusCode, 200)
  t.equal((await b.logout(token)).statusCode, 204)
  t.equal((await a.me(token)).statusCode, 401, 'logout on B is seen by A')
  t.equal((await b.changePassword(changeBody({ currentPassword: 'wrong one' }))).statusCode, 401)
  t.equal((await a.login(EMAIL, 'wrong two')).statusCode, 401)
  const limited = await b.login()
  t.equal(limited.statusCode, 429, 'the fourth attempt from this address, counted across instances')
  t.equal(limited.json().code, 'FST_PWAUTH_TOO_MANY_ATTEMPTS')
  t.ok(Number(limited.headers['retry-after']) > 0)
})
