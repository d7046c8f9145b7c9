import fastifyJwt from '@fastify/jwt'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildTestApp, SECRET, type TestApp } from '../helpers/app.js'

// The plugin signs and verifies through @fastify/jwt registered in a context of its own (lib/tokens/jwt-engine.ts):
// a host's own @fastify/jwt, registered before or after it, keeps fastify.jwt, request.jwtVerify and request.user.

const HOST_SECRET = 'the-host-own-secret-for-its-own-tokens-123456'
/** What @fastify/jwt 10 puts on `fastify.jwt` without a namespace. */
const HOST_JWT_MEMBERS = ['cookie', 'decode', 'lookupToken', 'options', 'sign', 'verify']
/** What the plugin registers in its own context, which must not reach the host. */
const PLUGIN_REQUEST_DECORATORS = ['fastifyPasswordAuthKey0JwtVerify', 'fastifyPasswordAuthKey0JwtDecode', 'fastifyPasswordAuthClaims']

type Order = 'before' | 'after'

/** An app with the plugin (two keys: the second only verifies) and the host's @fastify/jwt registered `order` it. */
async function appWithHostJwt (t: Test, order: Order, hostOptions: Record<string, unknown>, hostRoutes: (app: FastifyInstance) => void): Promise<TestApp> {
  const host = { secret: HOST_SECRET, ...hostOptions }
  return await buildTestApp(t, {
    auth: { jwt: { keys: [{ secret: SECRET }, { secret: 'an-older-key-that-still-verifies-tokens' }] } },
    before: async (app) => { if (order === 'before') await app.register(fastifyJwt, host) },
    routes: (app) => {
      if (order === 'after') app.register(fastifyJwt, host)
      app.after(() => { hostRoutes(app) })
    }
  })
}

function noPluginDecorators (t: Test, app: FastifyInstance, order: string): void {
  for (const name of PLUGIN_REQUEST_DECORATORS) t.notOk(app.hasRequestDecorator(name), `${order}: no request.${name} on the host`)
  t.notOk(app.hasReplyDecorator('fastifyPasswordAuthKey0JwtSign'), `${order}: no reply decorator on the host`)
}

for (const order of ['before', 'after'] as const) {
  t.test(`a host's own @fastify/jwt registered ${order} the plugin keeps fastify.jwt, request.jwtVerify and request.user`, async (t) => {
    const { app, token, me } = await appWithHostJwt(t, order, {}, (app) => {
      app.get('/host', async (request) => ({ verified: await request.jwtVerify(), user: request.user }))
      app.get('/host-user', { onRequest: async (request) => { await request.jwtVerify() } }, async (request) => request.user)
    })
    t.same(Object.keys(app.jwt).sort(), HOST_JWT_MEMBERS, 'fastify.jwt is the host\'s, with nothing of the plugin in it')
    noPluginDecorators(t, app, order)
    const hostToken = app.jwt.sign({ host: 'yes' })
    const host = await app.inject({ url: '/host', headers: { authorization: `Bearer ${hostToken}` } })
    t.equal(host.statusCode, 200)
    t.equal(host.json().verified.host, 'yes', 'request.jwtVerify verifies the host\'s tokens')
    t.equal(host.json().user.host, 'yes', 'and sets request.user')
    t.equal((await app.inject({ url: '/host-user', headers: { authorization: `Bearer ${hostToken}` } })).json().host, 'yes')
    t.equal(app.jwt.verify<{ host: string }>(hostToken).host, 'yes', 'fastify.jwt.verify is the host\'s')

    const pluginToken = await token()
    t.equal((await me(pluginToken)).statusCode, 200, 'the plugin\'s tokens pass its guard')
    t.equal((await me(hostToken)).statusCode, 401, 'the host\'s tokens do not')
    t.equal((await app.inject({ url: '/host', headers: { authorization: `Bearer ${pluginToken}` } })).statusCode, 401,
      'the plugin\'s tokens are not the host\'s')
  })

  t.test(`a host's @fastify/jwt with a namespace, registered ${order} the plugin, keeps its own namespace alone`, async (t) => {
    const { app, token, me } = await appWithHostJwt(t, order, { namespace: 'host' }, (app) => {
      app.get('/host', async (request) => await (request as unknown as { hostJwtVerify: () => Promise<unknown> }).hostJwtVerify())
    })
    const namespaces = app.jwt as unknown as Record<string, { sign: (payload: object) => string }>
    t.same(Object.keys(namespaces), ['host'], 'fastify.jwt holds the host\'s namespace only')
    noPluginDecorators(t, app, order)
    const hostToken = namespaces.host!.sign({ host: 'namespaced' })
    t.equal((await app.inject({ url: '/host', headers: { authorization: `Bearer ${hostToken}` } })).json().host, 'namespaced')
    t.equal((await me(await token())).statusCode, 200)
    t.equal((await me(hostToken)).statusCode, 401)
  })
}

t.test('without a host @fastify/jwt, the plugin leaves no jwt decorator and no request.user', async (t) => {
  const { app, token, me } = await buildTestApp(t)
  t.notOk(app.hasDecorator('jwt'))
  t.notOk(app.hasRequestDecorator('user'))
  noPluginDecorators(t, app, 'alone')
  t.equal((await me(await token())).statusCode, 200)
})

t.test('a host that decorated request.user itself, before the plugin, is left alone', async (t) => {
  const { app, token, me } = await buildTestApp(t, {
    before: (app) => { app.decorateRequest('user', null as never) },
    routes: (app) => { app.get('/user', { onRequest: async (request) => { (request as unknown as { user: string }).user = 'host' } }, async (request) => ({ user: (request as unknown as { user: string }).user })) }
  })
  t.equal((await me(await token())).statusCode, 200)
  t.same((await app.inject({ url: '/user' })).json(), { user: 'host' })
})
