import { createHook } from 'node:async_hooks'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import t from 'tap'
import { authenticate, MemoryAccountStore, MemorySessionStore } from '../../lib/index.js'
import { buildTestApp } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

/** The fewest promises any of `times` runs of `run` made (the first runs compile and warm up). */
async function promisesMade (run: () => Promise<unknown>, times = 5): Promise<number> {
  let made = 0
  const hook = createHook({ init: (_id, type) => { if (type === 'PROMISE') made++ } })
  let fewest = Infinity
  for (let i = 0; i < times; i++) {
    made = 0
    hook.enable()
    try {
      await run()
    } finally {
      hook.disable()
    }
    fewest = Math.min(fewest, made)
  }
  return fewest
}

/** The store's own methods, bound to it, behind a proxy: the same answers, through storeCall like any store's. */
function proxied<T extends object> (store: T): T {
  return new Proxy(store, {
    get (target, property) {
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
}

t.test('on memory stores the guard and Logout make no promise of their own for the store', async (t) => {
  const atOnce = await buildTestApp(t)
  const accounts = new MemoryAccountStore()
  accounts.add({ ...atOnce.ada })
  const called = await buildTestApp(t, { auth: { accounts: proxied(accounts), sessions: proxied(new MemorySessionStore()) } })
  const meAtOnce = await promisesMade(async () => await atOnce.me(await atOnce.token()).then((r) => { t.equal(r.statusCode, 200) }))
  const meCalled = await promisesMade(async () => await called.me(await called.token()).then((r) => { t.equal(r.statusCode, 200) }))
  t.ok(meCalled - meAtOnce >= 4, `GET /me: ${meAtOnce} promises against ${meCalled} through storeCall`)
  const tokens = [await atOnce.token(), await called.token()]
  const outAtOnce = await promisesMade(async () => await atOnce.logout(tokens[0]!), 1)
  const outCalled = await promisesMade(async () => await called.logout(tokens[1]!), 1)
  t.ok(outCalled - outAtOnce >= 3, `Logout: ${outAtOnce} promises against ${outCalled} through storeCall`)
  t.equal((await atOnce.me(tokens[0]!)).statusCode, 401, 'logged out at once')
  t.equal((await called.me(tokens[1]!)).statusCode, 401)
})

t.test('a memory store method replaced after registration is the one called, failing closed', async (t) => {
  const test = await buildTestApp(t, { auth: { storeTimeout: 200 } })
  const { sessions, accounts } = test
  const token = await test.token()
  t.equal((await test.me(token)).statusCode, 200)

  sessions.get = async () => { throw new Error('sessions down') }
  expectProblem(t, await test.me(token), 503, 'FST_PWAUTH_UNAVAILABLE', 'a failing get answers 503')
  sessions.get = async () => await new Promise(() => {})
  expectProblem(t, await test.me(token), 503, 'FST_PWAUTH_UNAVAILABLE', 'a get that never answers: 503 after storeTimeout')
  delete (sessions as Partial<MemorySessionStore>).get
  t.equal((await test.me(token)).statusCode, 200, 'the prototype\'s get again: at once')

  accounts.findById = async () => null
  expectProblem(t, await test.me(token), 401, 'FST_PWAUTH_TOKEN_INVALID', 'the replaced account read says the account is gone')
  expectProblem(t, await test.logout(token), 401, 'FST_PWAUTH_TOKEN_INVALID', 'Logout reads it too')
  delete (accounts as Partial<MemoryAccountStore>).findById

  const other = await test.token()
  sessions.end = async () => { throw new Error('sessions down') }
  expectProblem(t, await test.logout(other), 503, 'FST_PWAUTH_UNAVAILABLE', 'a failing end answers 503')
  delete (sessions as Partial<MemorySessionStore>).end
  t.equal((await test.logout(other)).statusCode, 204)
  t.equal((await test.me(other)).statusCode, 401, 'ended')
})

t.test('a memory store that throws in the same turn fails closed: 503 from the guard and Logout, logged as any store failure', async (t) => {
  let broken = false
  // The store's clock is read by get and end alike: a host's clock that throws stands for any failure inside them.
  const sessions = new MemorySessionStore({ now: () => { if (broken) throw new Error('clock down'); return Date.now() } })
  const lines: Array<{ msg: string, operation?: string }> = []
  const test = await buildTestApp(t, {
    auth: { sessions },
    fastify: { logger: { level: 'error', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } }
  })
  const token = await test.token()
  t.equal((await test.me(token)).statusCode, 200)

  broken = true
  expectProblem(t, await test.me(token), 503, 'FST_PWAUTH_UNAVAILABLE', 'the guard: 503, not a pass and not a 500')
  expectProblem(t, await test.logout(token), 503, 'FST_PWAUTH_UNAVAILABLE', 'Logout: 503')
  t.same(lines.filter((line) => line.msg === 'fastify-password-auth: store failed').map((line) => line.operation),
    ['sessions.get', 'sessions.end'], 'each failure logged with its operation')

  broken = false
  t.equal((await test.me(token)).statusCode, 200, 'the session outlived the failure')
  t.equal((await test.logout(token)).statusCode, 204)
})

t.test('as a hook on memory stores the guard goes on in the same turn; awaited by a host, it is a promise', async (t) => {
  const seen: Array<{ result: unknown, doneInTurn: boolean, account: unknown }> = []
  const guard = authenticate as unknown as (request: FastifyRequest, reply: FastifyReply, done?: () => void) => unknown
  const probe = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    let doneInTurn = false
    const result = guard(request, reply, () => { doneInTurn = true })
    seen.push({ result, doneInTurn, account: request.account?.email })
    if (result === undefined) done()
    else (result as Promise<unknown>).then(() => { if (!reply.sent) done() }, done)
  }
  const routes = (app: FastifyInstance): void => {
    app.get('/probe', { onRequest: probe }, async (request) => request.account)
    app.get('/awaited', async (request, reply) => {
      const result = guard(request, reply)
      t.type(result, Promise, 'called without done: a promise')
      await result
      return reply.sent ? reply : request.account
    })
  }
  const atOnce = await buildTestApp(t, { routes })
  const accounts = new MemoryAccountStore()
  accounts.add({ ...atOnce.ada })
  const called = await buildTestApp(t, { routes, auth: { accounts: proxied(accounts), sessions: proxied(new MemorySessionStore()) } })

  const token = await atOnce.token()
  const probeWith = async (test: typeof atOnce, authorization: string): Promise<number> =>
    (await test.app.inject({ url: '/probe', headers: { authorization } })).statusCode
  t.equal(await probeWith(atOnce, `Bearer ${token}`), 200)
  t.same(seen.pop(), { result: undefined, doneInTurn: true, account: atOnce.ada.email }, 'memory stores: done called in the same turn, nothing returned')
  t.equal(await probeWith(called, `Bearer ${await called.token()}`), 200)
  const awaited = seen.pop()!
  t.type(awaited.result, Promise, 'a store that needs a call: a promise Fastify waits on')
  t.equal(awaited.doneInTurn, false, 'and done is not called')
  t.equal(await probeWith(atOnce, 'Bearer forged'), 401)
  t.equal(seen.pop()!.doneInTurn, false, 'a refused token: answered, done never called')

  const awaitedAnswer = await atOnce.app.inject({ url: '/awaited', headers: { authorization: `Bearer ${token}` } })
  t.equal(awaitedAnswer.json().email, atOnce.ada.email)
  t.equal((await atOnce.app.inject({ url: '/awaited', headers: { authorization: 'Bearer forged' } })).statusCode, 401)
})
