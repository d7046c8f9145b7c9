import Fastify, { type FastifyReply, type FastifyRequest, type RouteShorthandOptions } from 'fastify'
import t from 'tap'
import passwordAuth, { authenticate, authenticated } from '../../lib/index.js'
import { accessToken, appWithErrorLog, authOptions, EMAIL, PLUGIN_TIMEOUT_MS, SECRET } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

t.test('registered without await, the plugin loads during ready() and the exported guard lets only valid tokens in', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  // The exact scenario: no await before the route that uses the guard.
  app.register(passwordAuth, await authOptions())
  app.get('/me', { onRequest: authenticate }, async (request) => request.account)
  app.get('/pre', { preHandler: authenticate }, async (request) => request.account)
  await app.ready()
  for (const url of ['/me', '/pre']) {
    expectProblem(t, await app.inject({ url }), 401, 'FST_PWAUTH_TOKEN_MISSING', `${url}: no token`)
    expectProblem(t, await app.inject({ url, headers: { authorization: 'Bearer forged' } }), 401, 'FST_PWAUTH_TOKEN_INVALID', `${url}: a forged token`)
    const me = await app.inject({ url, headers: { authorization: `Bearer ${await accessToken(app)}` } })
    t.equal(me.statusCode, 200, `${url}: a valid token`)
    t.equal(me.json().email, EMAIL)
  }
})

t.test('the guard works declared before and after the registration, on the instance and imported alike', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  app.get('/before', { onRequest: authenticate }, async (request) => request.account?.id)
  await app.register(passwordAuth, { ...await authOptions(), decorators: { authenticate: 'authenticate' } })
  const decorated = (app as unknown as { authenticate: typeof authenticate }).authenticate
  t.equal(decorated, authenticate, 'app.authenticate, when asked for, is the exported guard itself')
  app.get('/after', { onRequest: decorated }, async (request) => request.account?.id)
  app.get('/both', { onRequest: [authenticate], preHandler: [authenticate] }, async (request) => request.account?.id)
  const token = await accessToken(app)
  for (const url of ['/before', '/after', '/both']) {
    t.equal((await app.inject({ url })).statusCode, 401, `${url}: no token`)
    t.equal((await app.inject({ url, headers: { authorization: `Bearer ${token}` } })).statusCode, 200, `${url}: a token`)
  }
})

t.test('a route in a context where the plugin is not registered fails ready(), naming the fix', async (t) => {
  const hooks: Array<[string, RouteShorthandOptions]> = [['onRequest', { onRequest: authenticate }], ['preHandler', { preHandler: [authenticate] }]]
  for (const [name, hook] of hooks) {
    const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
    t.teardown(async () => { await app.close() })
    const options = await authOptions()
    app.register(async function api (api) { await api.register(passwordAuth, options) })
    app.register(async function admin (admin) {
      admin.get('/stats', hook, async () => 'secret')
    }, { prefix: '/admin' })
    await t.rejects(async () => { await app.ready() }, {
      code: 'FST_PWAUTH_NOT_REGISTERED',
      message: /a route under the prefix "\/admin" uses the authenticate guard, but the plugin is not registered in its context or an ancestor.*await app\.register\(passwordAuth, options\)/
    }, name)
  }
})

t.test('with no registration at all, ready() fails too', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  app.get('/me', { onRequest: authenticate }, async () => 'secret')
  await t.rejects(async () => { await app.ready() }, { code: 'FST_PWAUTH_NOT_REGISTERED', message: /a route without a prefix uses the authenticate guard/ })
})

t.test('where Fastify cannot show the guard at start (called from a wrapper), a context without the plugin answers 503, never the route', async (t) => {
  const { app, errors } = appWithErrorLog(t)
  const options = await authOptions()
  app.register(async function api (api) { await api.register(passwordAuth, options) })
  app.register(async function admin (admin) {
    admin.get('/stats', { onRequest: async (request, reply) => await authenticate(request, reply) }, async () => 'secret')
  }, { prefix: '/admin' })
  await app.ready()
  const token = await accessToken(app)
  for (const headers of [{}, { authorization: `Bearer ${token}` }, { authorization: `Bearer ${token}` }]) {
    const response = await app.inject({ url: '/admin/stats', headers })
    expectProblem(t, response, 503, 'FST_PWAUTH_UNAVAILABLE')
    t.equal(response.headers['retry-after'], '1')
    t.notMatch(response.body, /secret/)
  }
  t.same(errors(), [
    'FST_PWAUTH_NOT_REGISTERED: fastify-password-auth: GET /admin/stats uses the authenticate guard, but the plugin is not registered in its ' +
    'context or an ancestor, so it could only answer 503. Register the plugin there or in an ancestor: await app.register(passwordAuth, options)'
  ], 'one clear, coded error per route, not one per request')
})

t.test('a not-found handler guarded from a wrapper, without the plugin, answers 503 and logs the URL', async (t) => {
  const { app, errors } = appWithErrorLog(t)
  app.setNotFoundHandler({ preHandler: async (request: FastifyRequest, reply: FastifyReply) => await authenticate(request, reply) }, async () => 'secret')
  expectProblem(t, await app.inject({ url: '/nowhere' }), 503, 'FST_PWAUTH_UNAVAILABLE')
  t.match(errors(), [/^FST_PWAUTH_NOT_REGISTERED: fastify-password-auth: GET \/nowhere uses the authenticate guard/])
})

t.test('the guard follows encapsulation: descendants of the registering context are guarded by it', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  const options = await authOptions()
  await app.register(async function api (api) {
    await api.register(passwordAuth, options)
    api.get('/own', { onRequest: authenticate }, async (request) => request.account?.email)
    await api.register(async function nested (nested) {
      nested.get('/nested', { onRequest: authenticate }, async (request) => request.account?.email)
    })
  }, { prefix: '/api' })
  const token = await accessToken(app, '/api/Auth')
  for (const url of ['/api/own', '/api/nested']) {
    t.equal((await app.inject({ url })).statusCode, 401, url)
    t.equal((await app.inject({ url, headers: { authorization: `Bearer ${token}` } })).body, EMAIL, url)
  }
})

t.test('two sibling registrations each guard their own routes with their own keys', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  const [first, second] = [await authOptions(), { ...await authOptions(), jwt: { secret: `${SECRET}-other` } }]
  for (const [prefix, options] of [['/one', first], ['/two', second]] as const) {
    app.register(async function api (api) {
      await api.register(passwordAuth, options)
      api.get('/me', { onRequest: authenticate }, async (request) => request.account?.email)
    }, { prefix })
  }
  const one = await accessToken(app, '/one/Auth')
  t.equal((await app.inject({ url: '/one/me', headers: { authorization: `Bearer ${one}` } })).statusCode, 200)
  t.equal((await app.inject({ url: '/two/me', headers: { authorization: `Bearer ${one}` } })).statusCode, 401, 'not the sibling\'s token')
})

t.test('binding the guard to anything but a Fastify instance is a plain bind', async (t) => {
  const bound = authenticate.bind(null)
  t.type(bound, 'function')
  t.not(bound, authenticate)
})

t.test('registration without await: every form the README shows still guards', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  app.register(passwordAuth, await authOptions()) // no await: the mistake under test
  app.get('/imported', { onRequest: authenticate }, async (request) => ({ account: request.account }))
  app.get('/helper', authenticated(async (request) => ({ account: request.account })))
  t.notOk(app.hasDecorator('authenticate'), 'no app.authenticate to reach for before the registration has run')
  await app.ready()
  const token = await accessToken(app)
  for (const url of ['/imported', '/helper']) {
    t.equal((await app.inject({ url })).statusCode, 401, `${url}: no token, no account`)
    t.equal((await app.inject({ url, headers: { authorization: `Bearer ${token}` } })).json().account.email, EMAIL, `${url}: a token`)
  }
})
