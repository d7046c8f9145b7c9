import { Redis } from 'ioredis'
import pg from 'pg'
import { createClient, createCluster } from 'redis'
import t from 'tap'
import * as memory from '../../lib/index.js'
import * as postgres from '../../lib/stores/postgres/index.js'
import * as redis from '../../lib/stores/redis/index.js'

// Every store's constructor checks its options there, with the store's name: a missing or misnamed pool or
// client, an unknown option (with the one meant) and a value of the wrong kind fail at once, not as a TypeError
// at the first request. No connection is made: a pg Pool connects at its first query, and the client is lazy.

const pool = new pg.Pool()
const client = new Redis({ lazyConnect: true })
// node-redis clients connect only on connect().
const nodeRedis = createClient({ url: 'redis://127.0.0.1:6379' })
const nodeRedisCluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:6379' }] })
t.teardown(async () => { await pool.end(); client.disconnect() })

type StoreClass = new (options?: any) => unknown
const storesOf = (module: Record<string, unknown>, prefix: string): Array<[string, StoreClass]> =>
  Object.entries(module).filter(([name, value]) => name.startsWith(prefix) && name.endsWith('Store') && typeof value === 'function') as Array<[string, StoreClass]>

const POSTGRES = storesOf(postgres, 'Postgres')
const REDIS = storesOf(redis, 'Redis')

t.test('every PostgreSQL store: a missing pool, a client instead, an unknown option, a bad table or interval', async (t) => {
  t.ok(POSTGRES.length >= 8, POSTGRES.map(([name]) => name).join(', '))
  for (const [name, Store] of POSTGRES) {
    t.throws(() => new Store({}), { name: 'TypeError', message: `${name}: "pool" must be a pg Pool or Client (an object with a query() method), got nothing` }, `${name}({})`)
    t.throws(() => new Store(), { message: `${name}: "pool" must be a pg Pool or Client (an object with a query() method), got nothing` }, `${name}()`)
    t.throws(() => new Store({ client: pool }), { message: `${name}: unknown option client: did you mean pool?` }, `${name}({ client })`)
    t.throws(() => new Store(pool), { message: `${name}: pass the pool inside the options, new ${name}({ pool }), not as the options` }, `${name}(pool)`)
    t.throws(() => new Store({ pool, tabel: 'x' }), { message: `${name}: unknown option tabel: did you mean table?` }, `${name}({ tabel })`)
    t.throws(() => new Store({ pool, prefix: 'x' }), { message: `${name}: unknown option prefix: did you mean table?` }, `${name}({ prefix })`)
    t.throws(() => new Store({ pool: {} }), { message: /"pool" must be a pg Pool or Client/ })
    t.doesNotThrow(() => new Store({ pool }), `${name}({ pool })`)
  }
  t.throws(() => new postgres.PostgresSessionStore({ pool, pruneIntervalMs: '1m' as never }),
    { message: 'PostgresSessionStore: "pruneIntervalMs" must be a whole number of milliseconds from 1, got "1m"' })
  t.throws(() => new postgres.PostgresSessionStore({ pool, preparedStatements: 'no' as never }),
    { message: 'PostgresSessionStore: "preparedStatements" must be true or false, got "no"' })
  t.throws(() => new postgres.PostgresMfaStore({ pool, table: '' }), { message: 'PostgresMfaStore: "table" must be a table name (optionally schema.table), got ""' })
  t.throws(() => new postgres.PostgresAccountStore({ pool, colums: {} } as never), { message: 'PostgresAccountStore: unknown option colums: did you mean columns?' })
  t.throws(() => new postgres.PostgresAccountStore({ pool, createColumns: {} } as never), { message: 'PostgresAccountStore: "createColumns" must be a function, got object' })
})

t.test('every Redis store: a missing client, a pool instead, an unknown option, a prefix that is not a string', async (t) => {
  t.ok(REDIS.length >= 6, REDIS.map(([name]) => name).join(', '))
  for (const [name, Store] of REDIS) {
    t.throws(() => new Store({}), { name: 'TypeError', message: `${name}: "client" must be an ioredis client (new Redis(…) or new Cluster(…)) or a node-redis one (createClient() or createCluster()), got nothing` }, `${name}({})`)
    t.throws(() => new Store({ pool: client }), { message: `${name}: unknown option pool: did you mean client?` }, `${name}({ pool })`)
    t.throws(() => new Store({ redis: client }), { message: `${name}: unknown option redis: did you mean client?` }, `${name}({ redis })`)
    t.throws(() => new Store(client), { message: `${name}: pass the client inside the options, new ${name}({ client }), not as the options` }, `${name}(client)`)
    t.throws(() => new Store({ client, prefx: 'app:' }), { message: `${name}: unknown option prefx: did you mean prefix?` }, `${name}({ prefx })`)
    t.throws(() => new Store({ client, table: 'x' }), { message: `${name}: unknown option table: did you mean prefix?` }, `${name}({ table })`)
    t.throws(() => new Store({ client, prefix: 42 }), { message: `${name}: "prefix" must be a string, got number` }, `${name}({ prefix: 42 })`)
    t.throws(() => new Store({ client: { get: () => null } }), { message: /"client" must be an ioredis client/ })
    t.throws(() => new Store({ client: { sendCommand: async () => null } }), { message: /"client" must be an ioredis client/ }, 'a sendCommand alone is no node-redis client')
    t.throws(() => new Store({ client: createClient({ RESP: 3 }) }), { message: `${name}: the node-redis client speaks RESP3; create it with RESP 2 (the default) for the stores` })
    t.doesNotThrow(() => new Store({ client, prefix: 'store-options-test:' }), `${name}({ client })`)
    t.doesNotThrow(() => new Store({ client: nodeRedis, prefix: 'store-options-test:' }), `${name}({ client: createClient() })`)
    t.doesNotThrow(() => new Store({ client: nodeRedisCluster, prefix: 'store-options-test:' }), `${name}({ client: createCluster() })`)
  }
})

t.test('the memory stores: an unknown option or a value of the wrong kind', async (t) => {
  t.throws(() => new memory.MemoryAttemptStore({ maxkeys: 5 } as never), { message: 'MemoryAttemptStore: unknown option maxkeys: did you mean maxKeys?' })
  t.throws(() => new memory.MemoryAttemptStore({ maxKeys: 0 }), { message: 'MemoryAttemptStore: "maxKeys" must be a whole number from 1, got number' })
  t.throws(() => new memory.MemoryOneTimeTokenStore({ max: 5 } as never), { message: 'MemoryOneTimeTokenStore: unknown option max: did you mean maxTokens?' })
  t.throws(() => new memory.MemorySessionStore({ now: 5 } as never), { message: 'MemorySessionStore: "now" must be a function, got number' })
  t.throws(() => new memory.MemoryTrustedDeviceStore({ clock: Date.now } as never), { message: /MemoryTrustedDeviceStore: unknown option clock/ })
  t.throws(() => new memory.MemoryActivityStore({ records: 5 } as never), { message: 'MemoryActivityStore: unknown option records: did you mean maxRecords?' })
  t.doesNotThrow(() => new memory.MemoryAttemptStore())
  t.doesNotThrow(() => new memory.MemorySessionStore({ now: Date.now }))
})
