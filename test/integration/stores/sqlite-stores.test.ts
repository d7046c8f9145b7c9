import Fastify from 'fastify'
import t, { type Test } from 'tap'
import passwordAuth, { MemoryAccountStore, MemoryAttemptStore, MemoryOneTimeTokenStore, type PasswordAuthOptions } from '../../../lib/index.js'
import type BetterSqlite3 from 'better-sqlite3'
import {
  accountsTableSqlite, activityTableSqlite, attemptsTableSqlite, createSqliteSchema, mfaTableSqlite, oneTimeTokensTableSqlite, passkeysTableSqlite, sessionsTableSqlite,
  SqliteAccountStore, SqliteActivityStore, SqliteAttemptStore, SqliteMfaStore, SqliteOneTimeTokenStore, SqlitePasskeyStore, SqliteSessionStore, SqliteTrustedDeviceStore,
  trustedDevicesTableSqlite, type SqliteDatabase
} from '../../../lib/stores/sqlite/index.js'
import {
  accountStoreContract, attemptStoreContract, mfaStoreContract, oneTimeTokenStoreContract, passkeyStoreContract, sessionStoreContract, trustedDeviceStoreContract,
  type ContractCheck
} from '../../../lib/stores/testing/index.js'
import { PLUGIN_TIMEOUT_MS, SECRET } from '../../helpers/app.js'
import { sqliteDatabase, sqliteFile, sqliteUnavailable } from '../../helpers/sqlite.js'
import type { Teardown } from '../../helpers/teardown.js'

const HASH = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE'

/** Every store contract, each check on a table of its own (named after its namespace) in `connect()`'s database. */
function contracts (connect: () => { database: SqliteDatabase, stores: <S>(make: (database: SqliteDatabase) => S) => S }): ContractCheck[] {
  const on = <S>(namespace: string, ddl: (table: string) => string, make: (database: SqliteDatabase, table: string) => S): S => {
    const { database, stores } = connect()
    database.exec(ddl(namespace))
    return stores((db) => make(db, namespace))
  }
  return [
    ...accountStoreContract({
      create: async (namespace) => {
        const stores = on(namespace, accountsTableSqlite, (database, table) => new SqliteAccountStore({ database, table }))
        return { store: stores, add: async (account) => (await stores.add(account))!, setActive: async (id, active) => await stores.setActive(id, active) }
      }
    }),
    ...sessionStoreContract({ create: async (namespace) => on(namespace, sessionsTableSqlite, (database, table) => new SqliteSessionStore({ database, table })) }),
    ...attemptStoreContract({ create: async (namespace) => on(namespace, attemptsTableSqlite, (database, table) => new SqliteAttemptStore({ database, table })) }),
    ...oneTimeTokenStoreContract({ create: async (namespace) => on(namespace, oneTimeTokensTableSqlite, (database, table) => new SqliteOneTimeTokenStore({ database, table })) }),
    ...mfaStoreContract({ create: async (namespace) => on(namespace, mfaTableSqlite, (database, table) => new SqliteMfaStore({ database, table })) }),
    ...passkeyStoreContract({ create: async (namespace) => on(namespace, passkeysTableSqlite, (database, table) => new SqlitePasskeyStore({ database, table })) }),
    ...trustedDeviceStoreContract({ create: async (namespace) => on(namespace, trustedDevicesTableSqlite, (database, table) => new SqliteTrustedDeviceStore({ database, table })) })
  ]
}

/**
 * A store whose calls go to two stores on two connections to one file, in turn: what one connection wrote the other
 * must read, and its transactions must hold against the other's (as a second process's would).
 */
function alternating<S extends object> (stores: S[]): S {
  let turn = 0
  return new Proxy(stores[0]!, {
    get (target, name) {
      const value = Reflect.get(target, name)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        const store = stores[turn++ % stores.length] as Record<string | symbol, (...args: unknown[]) => unknown>
        return store[name]!.apply(store, args)
      }
    }
  })
}

function connection (t: Teardown, file: string): BetterSqlite3.Database {
  return sqliteDatabase(t, file)
}

t.test('SQLite stores keep every store contract', { skip: sqliteUnavailable }, async (t) => {
  const database = connection(t, sqliteFile(t))
  for (const check of contracts(() => ({ database, stores: (make) => make(database) }))) await t.test(check.name, check.run)
})

t.test('SQLite stores keep every store contract with their calls spread over two connections to one file', { skip: sqliteUnavailable }, async (t) => {
  const file = sqliteFile(t)
  const [first, second] = [connection(t, file), connection(t, file)]
  for (const check of contracts(() => ({ database: first, stores: (make) => alternating([make(first), make(second)] as object[]) as ReturnType<typeof make> }))) {
    await t.test(check.name, check.run)
  }
})

t.test('createSqliteSchema: WAL, a busy timeout, idempotent; a store without its table fails when made, naming the fix', { skip: sqliteUnavailable }, async (t) => {
  const file = sqliteFile(t)
  const database = connection(t, file)
  createSqliteSchema(database, { busyTimeoutMs: 1234 })
  t.equal(database.pragma('journal_mode', { simple: true }), 'wal')
  t.equal(database.pragma('busy_timeout', { simple: true }), 1234)
  t.throws(() => new SqliteSessionStore({ database, table: 'missing' }), /SqliteSessionStore: cannot prepare its statements \(no such table: missing\); create the tables first with createSqliteSchema\(database\)/)
  t.throws(() => new SqliteSessionStore(database as never), /SqliteSessionStore: pass the database inside the options, new SqliteSessionStore\(\{ database \}\)/)
  t.throws(() => new SqliteMfaStore({ db: database } as never), /SqliteMfaStore: unknown option db: did you mean database\?/)
  t.throws(() => new SqliteMfaStore({ database: {} } as never), /"database" must be a better-sqlite3 Database/)
  t.throws(() => createSqliteSchema(database, { busyTimeoutMs: -1 }), /busyTimeoutMs/)
})

t.test('accounts: e-mails stored normalised and unique, seeding idempotent, deactivation by any SQL advances the credential version', { skip: sqliteUnavailable }, async (t) => {
  const database = connection(t, sqliteFile(t))
  const store = new SqliteAccountStore({ database })
  const ada = await store.add({ email: '  Ada@Example.com ', passwordHash: HASH, fields: { displayName: 'Ada' } })
  t.equal(ada?.email, 'ada@example.com')
  t.same(await store.findById(ada!.id), { id: ada!.id, email: 'ada@example.com', active: true, credentialVersion: 0, displayName: 'Ada' }, 'fields come back as given')
  await t.rejects(store.add({ email: 'ada@example.com', passwordHash: HASH }), /already exists/)
  t.equal(await store.add({ email: 'ada@example.com', passwordHash: HASH }, { ifAbsent: true }), null)
  database.prepare('UPDATE auth_accounts SET active = 0 WHERE id = ?').run(ada!.id)
  t.match(await store.findById(ada!.id), { active: false, credentialVersion: 1 }, 'the trigger advanced it')
  t.equal(await store.setActive(ada!.id, true), true)
  t.equal(await store.setActive(ada!.id, false), true)
  t.match(await store.findById(ada!.id), { active: false, credentialVersion: 2 }, 'setActive advances it once, not twice')
  t.equal(await store.findById('not-an-id'), null)
})

t.test('activity: newest first, limited, forgotten per account, pruned past the retention', { skip: sqliteUnavailable }, async (t) => {
  const database = connection(t, sqliteFile(t))
  database.exec(activityTableSqlite('events'))
  const store = new SqliteActivityStore({ database, table: 'events', retentionMs: 60_000 })
  const now = Date.now()
  await store.add({ type: 'login.succeeded', time: now - 120_000, accountId: 'a', details: {} })
  await store.add({ type: 'login.failed', time: now - 10, accountId: 'a', ip: '192.0.2.1', details: { reason: 'password' } })
  await store.add({ type: 'login.succeeded', time: now, accountId: 'a', requestId: 'r1', details: {} })
  await store.add({ type: 'login.succeeded', time: now, accountId: 'b', details: {} })
  t.same(await store.list('a', 10), [
    { type: 'login.succeeded', time: now, accountId: 'a', requestId: 'r1', details: {} },
    { type: 'login.failed', time: now - 10, accountId: 'a', ip: '192.0.2.1', details: { reason: 'password' } }
  ], 'the record past the retention is not listed')
  t.equal((await store.list('a', 1)).length, 1)
  t.equal(await store.prune(), 1)
  await store.forget('a')
  t.same(await store.list('a', 10), [])
  t.equal((await store.list('b', 10)).length, 1)
})

t.test('sessions past their limits, expired tokens and trusts, and attempt rows with nothing to count are pruned', { skip: sqliteUnavailable }, async (t) => {
  const database = connection(t, sqliteFile(t))
  const sessions = new SqliteSessionStore({ database })
  const session = (id: string) => ({ id, accountId: 'a', credentialVersion: 0, keyId: 'k', ip: '', userAgent: '' })
  await sessions.create(session('short'), { idleMs: 50, maxMs: 50, graceMs: 0 })
  await sessions.create(session('long'), { idleMs: 60_000, maxMs: 60_000, graceMs: 0 })
  const tokens = new SqliteOneTimeTokenStore({ database })
  await tokens.put('slot', 'hash', { purpose: 'p', accountId: 'a', email: 'a@example.com', credentialVersion: 0 }, 50)
  const attempts = new SqliteAttemptStore({ database })
  await attempts.reserve('abandoned', 'ticket', { freeFailures: 2, blockMs: 1000, maxBlockMs: 1000, leaseMs: 20, forgetAfterMs: 20 })
  const trusted = new SqliteTrustedDeviceStore({ database })
  await trusted.trust('a', { id: 'id-1', deviceHash: 'h-1', label: 'Chrome on Linux' }, 50, 0)
  await trusted.trust('a', { id: 'id-2', deviceHash: 'h-2', label: 'Safari on iOS' }, 60_000, 0)
  await new Promise((resolve) => setTimeout(resolve, 80))
  t.equal(await sessions.prune(), 1)
  t.equal(await tokens.prune(), 1)
  t.equal(await attempts.prune(), 1, 'the abandoned reservation')
  t.equal(await trusted.prune(), 1, 'the expired trust')
  t.same((await trusted.list('a')).map((trust) => trust.id), ['id-2'])
  t.same(database.prepare('SELECT id FROM auth_sessions').all(), [{ id: 'long' }])
})

/** Registers the plugin with `auth`; resolves the registration error, if any. */
async function register (t: Test, auth: Partial<PasswordAuthOptions>): Promise<Error | undefined> {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  return await app.register(passwordAuth, { accounts: new MemoryAccountStore(), jwt: { secret: SECRET }, rateLimit: false, ...auth }).ready().then(() => undefined, (err: Error) => err)
}

t.test('SQLite serves one process: beside a state store instances share, registration is refused and says what to do', { skip: sqliteUnavailable }, async (t) => {
  const database = connection(t, sqliteFile(t))
  const memory = new MemoryOneTimeTokenStore()
  // A host's own store (its methods over anything): the plugin cannot know where it keeps its data, so it counts as shared.
  const hostStore = { put: memory.put.bind(memory), find: memory.find.bind(memory), consume: memory.consume.bind(memory) }
  const refused = await register(t, { sessions: new SqliteSessionStore({ database }), oneTimeTokens: hostStore, mfa: true })
  t.match(refused, {
    code: 'FST_PWAUTH_INVALID_OPTION',
    message: 'fastify-password-auth: sessions is in SQLite, which serves one process, but oneTimeTokens is in a store instances share: every instance would keep ' +
      'its own sessions. Put all of them in SQLite (one server process), or all in shared stores (PostgreSQL, Redis) for several instances'
  })
  const attempts = new MemoryAttemptStore()
  const hostAttempts = { reserve: attempts.reserve.bind(attempts), settle: attempts.settle.bind(attempts) }
  t.match(await register(t, { sessions: new SqliteSessionStore({ database }), mfa: { store: new SqliteMfaStore({ database }) }, attempts: hostAttempts }),
    { message: /sessions, mfa\.store are in SQLite, which serves one process, but attempts is in a store instances share/ })
  t.equal(await register(t, {
    accounts: new SqliteAccountStore({ database }),
    sessions: new SqliteSessionStore({ database }),
    attempts: new SqliteAttemptStore({ database }),
    mfa: { store: new SqliteMfaStore({ database }), trustDays: 1, trustedDevices: new SqliteTrustedDeviceStore({ database }) }
  }), undefined, 'every state store in SQLite, one-time tokens in this process\'s memory: one process, accepted (no "shared sessions" refusal)')
  t.equal(await register(t, { sessions: new SqliteSessionStore({ database }), oneTimeTokens: new SqliteOneTimeTokenStore({ database }), passwordReset: true, deliver: async () => {} }),
    undefined, 'accounts may live anywhere')
})
