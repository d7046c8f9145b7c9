import fastifyJwt from '@fastify/jwt'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import t from 'tap'
import passwordAuth, { authenticate, MemoryAccountStore, type PasswordAuthOptions } from '../../lib/index.js'
import { buildTestApp, CHEAP_ARGON2, EMAIL, PASSWORD, PLUGIN_TIMEOUT_MS, SECRET } from '../helpers/app.js'

const HOST_JWT = { secret: 'the-host-own-secret-for-its-own-tokens' }

function options (extra: Partial<PasswordAuthOptions> = {}): PasswordAuthOptions {
  return { accounts: new MemoryAccountStore(), jwt: { secret: SECRET }, argon2: CHEAP_ARGON2, rateLimit: false, ...extra }
}

/** The usual @fastify/jwt recipe: the host's own `fastify.authenticate`. */
async function hostJwtGuard (app: ReturnType<typeof Fastify>): Promise<void> {
  await app.register(fastifyJwt, HOST_JWT)
  app.decorate('authenticate', async function hostAuthenticate (request: FastifyRequest, reply: FastifyReply) {
    try { await request.jwtVerify() } catch { return await reply.code(401).send({ host: 'guard' }) }
  })
}

/** The host's guard, which its own `declare module 'fastify'` would type. */
function hostGuard (app: ReturnType<typeof Fastify>): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return (app as unknown as { authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void> }).authenticate
}

t.test('the plugin claims no host name: a host that decorated request.user first works, and the plugin adds no user', async (t) => {
  const plain = await buildTestApp(t)
  t.notOk(plain.app.hasRequestDecorator('user'), 'no request.user of the plugin\'s')
  const { app, me, token } = await buildTestApp(t, {
    before: (app) => { app.decorateRequest('user', null as never) },
    routes: (app) => { app.get('/user', { onRequest: authenticate }, async (request) => ({ user: (request as unknown as { user: unknown }).user })) }
  })
  t.equal((await me(await token())).json().email, EMAIL)
  t.same((await app.inject({ url: '/user', headers: { authorization: `Bearer ${await token()}` } })).json(), { user: null }, 'the host\'s user is left alone')
})

t.test('a host with its own fastify.authenticate keeps it: the plugin adds none unless asked', async (t) => {
  const { app } = await buildTestApp(t, { before: hostJwtGuard, routes: (app) => { app.get('/host', { onRequest: hostGuard(app) }, async () => 'host route') } })
  t.same((await app.inject({ url: '/host' })).json(), { host: 'guard' })
})

t.test('asked for fastify.authenticate where the host has its own: a coded error that names the option', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await hostJwtGuard(app)
  await t.rejects(async () => { await app.register(passwordAuth, { ...options(), decorators: { authenticate: 'authenticate' } }).ready() }, {
    code: 'FST_PWAUTH_NAME_TAKEN',
    message: /^fastify-password-auth: fastify\.authenticate is already decorated \(by your app or another plugin, such as a @fastify\/jwt guard\)\. Keep yours: pass decorators: \{ authenticate: 'passwordAuthenticate' \} \(or false\)/
  })
})

t.test('renamed or turned off, the guard lives beside the host\'s own authenticate', async (t) => {
  for (const name of ['passwordAuthenticate', false] as const) {
    const { app, token } = await buildTestApp(t, {
      before: hostJwtGuard,
      auth: { decorators: { authenticate: name } },
      routes: (app) => {
        app.get('/host', { onRequest: hostGuard(app) }, async () => 'host route')
        app.get('/ours', { onRequest: authenticate }, async (request) => request.account?.email)
      }
    })
    const label = String(name)
    const hostToken = app.jwt.sign({ sub: 'host' })
    t.equal((await app.inject({ url: '/host', headers: { authorization: `Bearer ${hostToken}` } })).body, 'host route', `${label}: the host's guard`)
    t.same((await app.inject({ url: '/host' })).json(), { host: 'guard' }, `${label}: is the host's`)
    t.equal((await app.inject({ url: '/ours', headers: { authorization: `Bearer ${await token()}` } })).body, EMAIL, `${label}: the exported guard`)
    t.equal((await app.inject({ url: '/ours', headers: { authorization: `Bearer ${hostToken}` } })).statusCode, 401, `${label}: takes no host token`)
    if (name === false) t.notOk(app.hasDecorator('passwordAuthenticate'), 'false adds no instance decorator')
    else t.equal((app as unknown as Record<string, unknown>)[name], authenticate, `${label}: the guard under its new name`)
  }
})

t.test('a host that owns request.account renames the plugin\'s, or gets a coded error', async (t) => {
  const taken = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await taken.close() })
  taken.decorateRequest('account', null)
  await t.rejects(async () => { await taken.register(passwordAuth, options()).ready() }, {
    code: 'FST_PWAUTH_NAME_TAKEN',
    message: /request\.account is already decorated \(by your app or another plugin\)\. Keep yours: pass decorators: \{ account: 'passwordAuthAccount' \}/
  })

  const { app, token } = await buildTestApp(t, {
    before: (app) => {
      app.decorateRequest('account', null)
      app.addHook('onRequest', async (request) => { request.account = { host: 'own account' } as never })
    },
    auth: { decorators: { account: 'member' } },
    routes: (app) => {
      app.get('/both', { onRequest: authenticate }, async (request) => ({ member: (request as unknown as { member: { email: string } }).member.email, account: request.account }))
    }
  })
  t.same((await app.inject({ url: '/both', headers: { authorization: `Bearer ${await token()}` } })).json(), { member: EMAIL, account: { host: 'own account' } })
})

t.test('a second registration in the same context, or under it, gets a coded error', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(passwordAuth, options())
  await t.rejects(async () => { await app.register(passwordAuth, options({ prefix: '/Other' })).ready() }, {
    code: 'FST_PWAUTH_ALREADY_REGISTERED',
    message: /^fastify-password-auth is already registered in this context \(prefix ""\) or one of its ancestors\. Register it once; for a second, independent set of routes register it inside another plugin, beside the first/
  })

  const nested = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await nested.close() })
  await nested.register(passwordAuth, options())
  nested.register(async (child) => { await child.register(passwordAuth, options()) }, { prefix: '/child' })
  await t.rejects(async () => { await nested.ready() }, { code: 'FST_PWAUTH_ALREADY_REGISTERED', message: /prefix "\/child"/ })
})

t.test('fastify.passwordAuth taken by something else is a coded error too', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  app.decorate('passwordAuth', 'mine' as never)
  await t.rejects(async () => { await app.register(passwordAuth, options()).ready() }, { code: 'FST_PWAUTH_NAME_TAKEN', message: /fastify\.passwordAuth is already decorated/ })
})

t.test('a login after renaming still works end to end', async (t) => {
  const { login } = await buildTestApp(t, { auth: { decorators: { authenticate: 'pwAuth', account: 'member' } } })
  t.equal((await login(EMAIL, PASSWORD)).statusCode, 200)
})

t.test('a host with its own request.session (@fastify/session, say) gets a coded error naming decorators.session; renamed, both live', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  app.decorateRequest('session', null)
  await t.rejects(async () => { await app.register(passwordAuth, options()).ready() }, {
    code: 'FST_PWAUTH_NAME_TAKEN',
    message: /request\.session is already decorated \(by your app or another plugin, such as @fastify\/session\)\. Keep yours: pass decorators: \{ session: 'passwordAuthSession' \}/
  })
  const { app: renamed, token } = await buildTestApp(t, {
    before: (app) => { app.decorateRequest('session', null) },
    auth: { decorators: { session: 'authSession' } },
    routes: (app) => { app.get('/both', { onRequest: authenticate }, async (request) => ({ host: (request as unknown as { session: unknown }).session, ours: (request as unknown as { authSession: { id: string } }).authSession.id })) }
  })
  const both = (await renamed.inject({ url: '/both', headers: { authorization: `Bearer ${await token()}` } })).json()
  t.equal(both.host, null, 'the host\'s own, untouched')
  t.match(both.ours, /^[\w-]{22}$/)
})
