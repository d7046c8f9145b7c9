// Compiled by test/integration/package/types.test.ts on its own (tsconfig.renamed.json): a host with the @fastify/jwt recipe's
// own `fastify.authenticate` and its own `request.account`, and the plugin's decorators renamed to match.
import fastifyJwt from '@fastify/jwt'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import passwordAuth, { authenticate, authenticated, MemoryAccountStore } from 'fastify-password-auth'

interface HostUser { name: string }

declare module 'fastify' {
  interface FastifyInstance {
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
  }
  interface FastifyRequest {
    account: HostUser
  }
}

declare module 'fastify-password-auth' {
  interface PasswordAuthDecoratorNames { authenticate: false, account: 'member' }
}

const app = Fastify()
await app.register(fastifyJwt, { secret: 'the-host-own-secret-for-its-own-tokens' })
app.decorate('authenticate', async function (request: FastifyRequest, reply: FastifyReply) {
  try { await request.jwtVerify() } catch { await reply.code(401).send() }
})
app.decorateRequest('account', { getter: () => ({ name: 'host' }) })
await app.register(passwordAuth, {
  accounts: new MemoryAccountStore(),
  jwt: { secret: 'a-consumer-secret-that-is-32-bytes-long' },
  decorators: { authenticate: false, account: 'member' }
})

app.get('/host', { onRequest: app.authenticate }, async (request) => request.account.name)
app.get('/ours', { onRequest: authenticate }, async (request) => request.member?.email)
app.get('/typed', authenticated(async (request) => {
  const email: string = request.member.email
  const name: string = request.account.name
  return { email, name }
}))
