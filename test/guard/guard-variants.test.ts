import fastifyAuth from '@fastify/auth'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import t, { type Test } from 'tap'
import passwordAuth, { authenticateStrategy, optionalAuthenticate } from '../../lib/index.js'
import { accessToken, authOptions, buildTestApp, EMAIL, PLUGIN_TIMEOUT_MS } from '../helpers/app.js'

t.test('optionalAuthenticate: anonymous without a token, the account with one, 401 with a bad one', async (t) => {
  const { app, token } = await buildTestApp(t, {
    routes: (app) => { app.get('/feed', { onRequest: optionalAuthenticate }, async (request) => ({ account: request.account?.email ?? null })) }
  })
  t.same((await app.inject({ url: '/feed' })).json(), { account: null }, 'no header: anonymous')
  t.same((await app.inject({ url: '/feed', headers: { authorization: `Bearer ${await token()}` } })).json(), { account: EMAIL })
  const stale = await app.inject({ url: '/feed', headers: { authorization: 'Bearer not-a-token' } })
  t.equal(stale.statusCode, 401, 'a token that fails is not silently anonymous')
  t.match(stale.headers['www-authenticate'], /error="invalid_token"/)
})

t.test('optionalAuthenticate without the plugin in the route\'s context fails at ready, like authenticate', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  app.register(async (child) => { await child.register(passwordAuth, await authOptions()) })
  app.get('/feed', { onRequest: optionalAuthenticate }, async () => 'open')
  await t.rejects(async () => { await app.ready() }, { code: 'FST_PWAUTH_NOT_REGISTERED' })
})

/** A host with @fastify/auth: the plugin's guard or an API key, either one. */
async function hostWithApiKey (t: Test, register = true): Promise<FastifyInstance> {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(fastifyAuth)
  if (register) await app.register(passwordAuth, await authOptions())
  const apiKey = async (request: FastifyRequest): Promise<void> => {
    if (request.headers['x-api-key'] !== 'host-key') throw Object.assign(new Error('no API key'), { statusCode: 401 })
  }
  app.after(() => {
    app.get('/reports', { onRequest: app.auth([authenticateStrategy, apiKey]) }, async (request) => ({ account: request.account?.email ?? null }))
    app.get('/strict', { onRequest: app.auth([authenticateStrategy]) }, async (request) => ({ account: request.account?.email ?? null }))
  })
  await app.ready()
  return app
}

t.test('authenticateStrategy composes with @fastify/auth: the next strategy runs when it fails', async (t) => {
  const app = await hostWithApiKey(t)
  const token = await accessToken(app)
  t.same((await app.inject({ url: '/reports', headers: { authorization: `Bearer ${token}` } })).json(), { account: EMAIL }, 'a token')
  t.same((await app.inject({ url: '/reports', headers: { 'x-api-key': 'host-key' } })).json(), { account: null }, 'an API key alone: the API-key strategy ran')
  t.equal((await app.inject({ url: '/reports' })).statusCode, 401, 'neither')

  const strict = await app.inject({ url: '/strict', headers: { authorization: 'Bearer not-a-token' } })
  t.equal(strict.statusCode, 401)
  t.equal(strict.json().code, 'FST_PWAUTH_TOKEN_INVALID', 'the plugin\'s error, as the host\'s error handler sends it')
  t.equal(strict.headers['www-authenticate'], 'Bearer realm="fastify-password-auth", error="invalid_token"', 'with its challenge header')
})

t.test('authenticateStrategy without the plugin registered fails closed with 503', async (t) => {
  const app = await hostWithApiKey(t, false)
  const response = await app.inject({ url: '/strict', headers: { authorization: 'Bearer anything' } })
  t.equal(response.statusCode, 503)
  t.equal(response.headers['retry-after'], '1')
})
