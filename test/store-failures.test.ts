import t, { type Test } from 'tap'
import { MemoryAccountStore, MemoryAttemptStore, MemoryRevocationStore } from '../lib/index.js'
import { buildTestApp, changeBody } from './helpers/app.js'

/** Wraps a store so that the named methods throw while `broken.on` is true. */
function breakable<T extends object> (store: T, broken: { on: boolean }): T {
  return new Proxy(store, {
    get (target, property) {
      const value = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      return async (...args: unknown[]) => {
        if (broken.on) throw Object.assign(new Error(`connection refused to 10.0.0.1 (secret-arg ${String(args[0])})`), { code: 'ECONNREFUSED' })
        return await value.apply(target, args)
      }
    }
  })
}

function expectUnavailable (t: Test, response: { statusCode: number, headers: Record<string, unknown>, json: () => any, body: string }, name: string): void {
  t.equal(response.statusCode, 503, name)
  t.equal(response.json().code, 'FST_PWAUTH_UNAVAILABLE', name)
  t.equal(response.headers['retry-after'], '1', name)
  t.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8')
  t.notMatch(response.body, /ECONNREFUSED|10\.0\.0\.1|secret-arg/, 'no store error text')
}

for (const storeName of ['accounts', 'revocations', 'attempts'] as const) {
  t.test(`with the ${storeName} store failing, nothing gets through and everything answers 503`, async (t) => {
    const broken = { on: false }
    const stores = { accounts: new MemoryAccountStore(), revocations: new MemoryRevocationStore(), attempts: new MemoryAttemptStore() }
    const test = await buildTestApp(t, { auth: { [storeName]: breakable(stores[storeName], broken) } })
    if (storeName === 'accounts') {
      // The helper seeded its own account store; copy ada into the one we break.
      stores.accounts.add({ ...test.ada })
    }
    const issued = await test.token()
    broken.on = true

    const me = await test.me(issued)
    const login = await test.login()
    const change = await test.changePassword(changeBody())
    const logout = await test.logout(issued)
    if (storeName !== 'attempts') {
      expectUnavailable(t, me, 'authenticate')
      expectUnavailable(t, logout, 'logout')
    } else {
      t.equal(me.statusCode, 200, 'authentication does not use the attempt store')
      t.equal(logout.statusCode, 204)
    }
    if (storeName !== 'revocations') {
      expectUnavailable(t, login, 'login')
      expectUnavailable(t, change, 'change')
    } else {
      t.equal(login.statusCode, 200, 'login does not read revocations')
    }

    broken.on = false
    const after = storeName === 'revocations' ? await test.token('ada@example.com', 'a brand new passphrase for ada') : await test.token()
    t.equal((await test.me(after)).statusCode, 200, 'recovers when the store does')
  })
}

t.test('a failed password update leaves the old password in force', async (t) => {
  const broken = { on: false }
  const accounts = new MemoryAccountStore()
  const store = Object.assign(Object.create(accounts), {
    findByEmail: accounts.findByEmail.bind(accounts),
    findById: accounts.findById.bind(accounts),
    updatePasswordHash: async () => { if (broken.on) throw new Error('disk full'); return false }
  })
  const test = await buildTestApp(t, { auth: { accounts: store } })
  accounts.add({ ...test.ada })
  broken.on = true
  expectUnavailable(t, await test.changePassword(changeBody()), 'update failed')
  t.equal((await test.login()).statusCode, 200)
})

t.test('store failures are logged without the store error object', async (t) => {
  const lines: string[] = []
  const broken = { on: true }
  const test = await buildTestApp(t, {
    fastify: { logger: { level: 'info', stream: { write: (line: string) => { lines.push(line) } } } },
    auth: { revocations: breakable(new MemoryRevocationStore(), broken) }
  })
  broken.on = false
  const issued = await test.token()
  broken.on = true
  await test.me(issued)
  const failure = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'fastify-password-auth: store failed')
  t.ok(failure, 'logged')
  t.equal(failure.operation, 'revocations.isRevoked')
  t.equal(failure.storeError.code, 'ECONNREFUSED')
  t.equal(failure.level, 50)
})

t.test('a store that never answers fails the request closed within storeTimeout', async (t) => {
  const hang = { on: false }
  const inner = new MemoryRevocationStore()
  const revocations = {
    revoke: async (id: string, until: number) => { await inner.revoke(id, until) },
    isRevoked: async (id: string) => hang.on ? await new Promise<boolean>(() => {}) : await inner.isRevoked(id)
  }
  const test = await buildTestApp(t, { auth: { revocations, storeTimeout: 300 } })
  const issued = await test.token()
  hang.on = true
  const started = Date.now()
  expectUnavailable(t, await test.me(issued), 'hung store')
  const took = Date.now() - started
  t.ok(took >= 290 && took < 1500, `answered after ${took} ms`)
  hang.on = false
  t.equal((await test.me(issued)).statusCode, 200, 'and recovers')
})
