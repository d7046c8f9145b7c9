import type { FastifyContextConfig } from 'fastify'
import t from 'tap'
import passwordAuth, { authenticated, authenticateResponses } from '../../lib/index.js'
import { accessToken, appWithErrorLog, authOptions, buildTestApp, EMAIL } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

t.test('authenticated(handler): the guard first, the handler with the account', async (t) => {
  const { app, token } = await buildTestApp(t, {
    routes: (app) => { app.get('/email', authenticated(async (request) => request.account.email)) }
  })
  expectProblem(t, await app.inject({ url: '/email' }), 401, 'FST_PWAUTH_TOKEN_MISSING')
  t.equal((await app.inject({ url: '/email', headers: { authorization: `Bearer ${await token()}` } })).body, EMAIL)
})

t.test('authenticated(options, handler) keeps the options, runs the host\'s onRequest hooks after the guard, documents 401 and 503', async (t) => {
  const seen: Array<string | undefined> = []
  let routeOptions: Record<string, any> = {}
  const config = { label: 'orders' } as FastifyContextConfig & { label: string }
  const { app, token } = await buildTestApp(t, {
    before: (app) => { app.addHook('onRoute', (route) => { if (route.url === '/orders') routeOptions = route }) },
    routes: (app) => {
      app.get('/orders', authenticated({
        config,
        onRequest: [async (request) => { seen.push(request.account?.email) }],
        schema: { response: { 200: { type: 'object', properties: { label: { type: 'string' } } }, 503: { description: 'mine' } } }
      }, async (request) => ({ label: (request.routeOptions.config as unknown as typeof config).label, secret: 'not in the schema' })))
    }
  })
  const response = await app.inject({ url: '/orders', headers: { authorization: `Bearer ${await token()}` } })
  t.same(response.json(), { label: 'orders' }, 'config and the response schema are kept')
  t.same(seen, [EMAIL], 'the host hook ran after the guard')
  t.same(Object.keys(routeOptions.schema.response).sort(), ['200', '401', '503'])
  t.same(routeOptions.schema.response[401], authenticateResponses()[401], 'the guard\'s 401')
  t.same(routeOptions.schema.response[503], { description: 'mine' }, 'the host\'s own entries win')
  t.equal((await app.inject({ url: '/orders' })).statusCode, 401)
})

t.test('a handler reached without an account fails closed with 503 and says why, once', async (t) => {
  const { app, errors } = appWithErrorLog(t)
  await app.register(passwordAuth, await authOptions())
  let ran = false
  const route = authenticated(async () => { ran = true; return 'secret' })
  // Two ways to lose the guard: dropping the hook authenticated() set, and a later hook undoing it.
  app.get('/dropped', { ...route, onRequest: [] })
  app.get('/undone', authenticated({ onRequest: async (request) => { request.account = null } }, async () => { ran = true; return 'secret' }))
  const token = await accessToken(app)
  for (const url of ['/dropped', '/dropped', '/undone']) {
    const response = await app.inject({ url, headers: { authorization: `Bearer ${token}` } })
    expectProblem(t, response, 503, 'FST_PWAUTH_UNAVAILABLE', url)
  }
  t.notOk(ran, 'the handler never ran')
  t.same(errors(), ['GET /dropped', 'GET /undone'].map((route) => `FST_PWAUTH_GUARD_SKIPPED: fastify-password-auth: ${route} reached a handler made with ` +
    'authenticated() without an account: the authenticate guard did not run before it. Keep the onRequest hook that authenticated() sets in the route options'))
})

t.test('without the plugin at all, a handler reached without the guard fails closed too', async (t) => {
  const { app, errors } = appWithErrorLog(t)
  app.get('/orphan', { ...authenticated(async () => 'secret'), onRequest: [] })
  expectProblem(t, await app.inject({ url: '/orphan' }), 503, 'FST_PWAUTH_UNAVAILABLE')
  t.match(errors(), [/^FST_PWAUTH_GUARD_SKIPPED: .*GET \/orphan reached a handler made with authenticated\(\) without an account/])
})

t.test('with a renamed account decorator, authenticated() checks the renamed property', async (t) => {
  const { app, token } = await buildTestApp(t, {
    auth: { decorators: { account: 'member' } },
    routes: (app) => { app.get('/member', authenticated(async (request) => (request as unknown as { member: { email: string } }).member.email)) }
  })
  t.equal((await app.inject({ url: '/member', headers: { authorization: `Bearer ${await token()}` } })).body, EMAIL)
})
