import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { MemoryAccountStore, MemoryAttemptStore, MemorySessionStore } from '../../lib/index.js'
import { buildTestApp, changeBody } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

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

function expectUnavailable (t: Test, response: LightMyRequestResponse, name: string): void {
  expectProblem(t, response, 503, 'FST_PWAUTH_UNAVAILABLE', name)
  t.equal(response.headers['retry-after'], '1', name)
  t.notMatch(response.body, /ECONNREFUSED|10\.0\.0\.1|secret-arg/, 'no store error text')
}

for (const storeName of ['accounts', 'sessions', 'attempts'] as const) {
  t.test(`with the ${storeName} store failing, nothing gets through and everything answers 503`, async (t) => {
    const broken = { on: false }
    const stores = { accounts: new MemoryAccountStore(), sessions: new MemorySessionStore(), attempts: new MemoryAttemptStore() }
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
    expectUnavailable(t, login, 'login')
    if (storeName !== 'sessions') {
      expectUnavailable(t, change, 'change')
    } else {
      // The change is made (its new credential version rejects every earlier token); ending the
      // sessions in the store is the tidying up that failed.
      t.equal(change.statusCode, 204, 'the password change does not depend on the session store')
      t.equal((await test.me(issued)).statusCode, 503)
    }

    broken.on = false
    if (storeName === 'sessions') t.equal((await test.me(issued)).statusCode, 401, 'the token from before the change is dead')
    const after = storeName === 'sessions' ? await test.token('ada@example.com', 'a brand new passphrase for ada') : await test.token()
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
    auth: { sessions: breakable(new MemorySessionStore(), broken) }
  })
  broken.on = false
  const issued = await test.token()
  broken.on = true
  await test.me(issued)
  const failure = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'fastify-password-auth: store failed')
  t.ok(failure, 'logged')
  t.equal(failure.operation, 'sessions.get')
  t.equal(failure.storeError.code, 'ECONNREFUSED')
  t.equal(failure.level, 50)
})

t.test('a store that never answers fails the request closed within storeTimeout', async (t) => {
  const hang = { on: false }
  const inner = new MemorySessionStore()
  const sessions = new Proxy(inner, {
    get (target, property) {
      const value = Reflect.get(target, property, target)
      if (property !== 'get') return typeof value === 'function' ? value.bind(target) : value
      return async (id: string) => hang.on ? await new Promise(() => {}) : await target.get(id)
    }
  })
  const test = await buildTestApp(t, { auth: { sessions, storeTimeout: 300 } })
  const issued = await test.token()
  hang.on = true
  const started = Date.now()
  expectUnavailable(t, await test.me(issued), 'hung store')
  const took = Date.now() - started
  t.ok(took >= 290 && took < 1500, `answered after ${took} ms`)
  hang.on = false
  t.equal((await test.me(issued)).statusCode, 200, 'and recovers')
})
