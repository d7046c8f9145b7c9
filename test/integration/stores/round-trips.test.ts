import type { Command } from 'ioredis'
import t from 'tap'
import { hashPassword, MemoryAccountStore, MemorySessionStore, type AccountStore, type SessionStore } from '../../../lib/index.js'
import { createPostgresSchema, PostgresAccountStore } from '../../../lib/stores/postgres/index.js'
import { RedisSessionStore } from '../../../lib/stores/redis/index.js'
import { buildTestApp, CHEAP_ARGON2, EMAIL, PASSWORD } from '../../helpers/app.js'
import { deleteKeys, postgresSchema, postgresUnavailable, redisClient, redisUnavailable } from '../../helpers/services.js'

// What an authenticated request costs in store round trips; how fast they are is the bench's business.

t.test('authenticate reads the session and the account once each, both at once', async (t) => {
  const calls: string[] = []
  const later = async <T>(name: string, value: Promise<T>): Promise<T> => {
    calls.push(`${name} sent`)
    await new Promise((resolve) => setTimeout(resolve, 5))
    calls.push(`${name} answered`)
    return await value
  }
  const accounts = new MemoryAccountStore()
  const sessions = new MemorySessionStore()
  const watchedAccounts: AccountStore = {
    findByEmail: async (email) => await accounts.findByEmail(email),
    findById: async (id) => await later('findById', accounts.findById(id)),
    updatePasswordHash: async (update) => await accounts.updatePasswordHash(update)
  }
  const watchedSessions: SessionStore = {
    create: sessions.create.bind(sessions),
    get: async (id) => await later('get', sessions.get(id)),
    rotate: sessions.rotate.bind(sessions),
    reauthenticate: sessions.reauthenticate.bind(sessions),
    end: sessions.end.bind(sessions),
    endAll: sessions.endAll.bind(sessions),
    list: sessions.list.bind(sessions)
  }
  const { me, token } = await buildTestApp(t, { auth: { accounts: watchedAccounts, sessions: watchedSessions } })
  accounts.add({ email: 'grace@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const issued = await token('grace@example.com', PASSWORD)
  calls.length = 0
  t.equal((await me(issued)).statusCode, 200)
  t.same(calls.slice(0, 2).sort(), ['findById sent', 'get sent'], 'both reads go out before either answers')
  t.equal(calls.length, 4, 'one read of each')
})

t.test('with PostgreSQL accounts and Redis sessions, an authenticated request is one statement and one Redis command', {
  skip: postgresUnavailable || redisUnavailable
}, async (t) => {
  const { pool } = await postgresSchema(t, 'round_trips')
  await createPostgresSchema(pool)
  const accounts = new PostgresAccountStore({ pool })
  await accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const client = redisClient(t)
  const prefix = `fastify-password-auth-test:${process.pid}:round-trips:`
  t.teardown(async () => { await deleteKeys(client, prefix) })

  const statements: string[] = []
  const commands: string[] = []
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown
  const counted = Object.assign(Object.create(pool) as typeof pool, {
    query: (config: { name?: string }, ...rest: unknown[]) => { statements.push(config.name ?? 'unnamed'); return query(config, ...rest) }
  })
  const send = client.sendCommand.bind(client) as (...args: unknown[]) => unknown
  client.sendCommand = ((command: Command, ...rest: unknown[]) => { commands.push(command.name); return send(command, ...rest) }) as typeof client.sendCommand

  const { me, token } = await buildTestApp(t, {
    auth: { accounts: new PostgresAccountStore({ pool: counted }), sessions: new RedisSessionStore({ client, prefix }) }
  })
  const issued = await token()
  statements.length = 0
  commands.length = 0
  for (let i = 0; i < 5; i++) t.equal((await me(issued)).statusCode, 200)
  t.equal(statements.length, 5, `statements: ${statements.join(', ')}`)
  t.ok(statements.every((name) => name.includes('byId')), 'the account by id')
  t.same(commands, Array(5).fill('hmget'), 'one HMGET of the session')
})

t.test('Login reads the account once, with a device token or without one, known address or not', async (t) => {
  const accounts = new MemoryAccountStore()
  let reads = 0
  const watchedAccounts: AccountStore = {
    findByEmail: async (email) => { reads++; return await accounts.findByEmail(email) },
    findById: async (id) => await accounts.findById(id),
    updatePasswordHash: async (update) => await accounts.updatePasswordHash(update)
  }
  const { app } = await buildTestApp(t, { auth: { accounts: watchedAccounts } })
  accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const login = async (payload: Record<string, string>): Promise<number> => {
    reads = 0
    const response = await app.inject({ method: 'POST', url: '/Auth/Login', payload })
    return response.statusCode
  }
  t.equal(await login({ email: EMAIL, password: PASSWORD }), 200)
  t.equal(reads, 1, 'no device token: one read')
  const first = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })
  const { deviceToken } = first.json() as { deviceToken: string }
  t.equal(await login({ email: EMAIL, password: PASSWORD, deviceToken }), 200)
  t.equal(reads, 1, 'with a device token: the read that checks it is the password check\'s too')
  t.equal(await login({ email: EMAIL, password: 'a wrong password', deviceToken }), 401)
  t.equal(reads, 1, 'a wrong password with a device token: one read')
  t.equal(await login({ email: 'nobody@example.com', password: PASSWORD, deviceToken }), 401)
  t.equal(reads, 1, 'an unknown address with a device token: one read, as for a known one')
})
