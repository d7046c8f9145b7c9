import t from 'tap'
import { authenticate } from '../../lib/index.js'
import { buildTestApp, EMAIL } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

t.test('authenticate puts the account, without its hash, on request.account', async (t) => {
  const { me, token, ada } = await buildTestApp(t)
  const response = await me(await token())
  t.equal(response.statusCode, 200)
  t.same(response.json(), { id: ada.id, email: EMAIL, active: true, credentialVersion: 0 })
  t.notMatch(response.body, /argon2/)
})

t.test('request.account is null on routes without the guard', async (t) => {
  const { app, token } = await buildTestApp(t, {
    before: (app) => { app.get('/open', async (request) => ({ account: request.account })) }
  })
  const response = await app.inject({ url: '/open', headers: { authorization: `Bearer ${await token()}` } })
  t.same(response.json(), { account: null })
})

t.test('authenticate works as a preHandler too', async (t) => {
  const { app, token } = await buildTestApp(t, {
    routes: (app) => {
      app.get('/pre', { preHandler: authenticate }, async (request) => ({ id: request.account?.id }))
    }
  })
  t.equal((await app.inject({ url: '/pre' })).statusCode, 401)
  t.equal((await app.inject({ url: '/pre', headers: { authorization: `Bearer ${await token()}` } })).statusCode, 200)
})

t.test('guard failures are problem+json whatever the host error handler and schemas do', async (t) => {
  const { app } = await buildTestApp(t, {
    before: (app) => {
      app.setErrorHandler(async (_error, _request, reply) => await reply.code(418).send({ host: 'handler' }))
    },
    routes: (app) => {
      app.get('/host-error', async () => { throw new Error('host failure') })
      app.get('/guarded', {
        onRequest: authenticate,
        schema: { response: { 401: { type: 'object', properties: { only: { type: 'string' } } } } }
      }, async () => ({ ok: true }))
    }
  })
  const missing = await app.inject({ url: '/guarded' })
  expectProblem(t, missing, 401, 'FST_PWAUTH_TOKEN_MISSING')
  t.equal(missing.headers['www-authenticate'], 'Bearer realm="fastify-password-auth"')
  const hostError = await app.inject({ url: '/host-error' })
  t.equal(hostError.statusCode, 418, 'the host error handler still handles host routes')
  t.same(hostError.json(), { host: 'handler' })
  const invalid = await app.inject({ url: '/guarded', headers: { authorization: 'Bearer nope' } })
  t.equal(invalid.json().code, 'FST_PWAUTH_TOKEN_INVALID')
  t.equal(invalid.headers['www-authenticate'], 'Bearer realm="fastify-password-auth", error="invalid_token"')
})
