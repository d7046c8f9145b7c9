import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import passwordAuth, { type PasswordAuthOptions } from '../lib/index.js'

export interface AppOptions {
  auth: PasswordAuthOptions
  logger?: FastifyServerOptions['logger']
  /** Answers GET /health: resolves when the stores are reachable, rejects when not. */
  healthCheck?: () => Promise<void>
}

/** The demo server: the plugin, GET /me, GET /health and the OpenAPI document with its page at /docs. */
export async function buildApp ({ auth, logger = false, healthCheck = async () => {} }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger })

  await app.register(swagger, {
    openapi: {
      info: { title: 'fastify-password-auth example', version: '1.0.0' },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } }
    }
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  await app.register(passwordAuth, auth)

  app.get('/me', {
    onRequest: app.authenticate,
    schema: { summary: 'The signed-in account', tags: ['Example'], security: [{ bearerAuth: [] }] }
  }, async (request) => request.account)

  app.get('/health', { schema: { summary: 'Liveness and store reachability', tags: ['Example'] } }, async (request, reply) => {
    try {
      await healthCheck()
      return { status: 'ok' }
    } catch (err) {
      request.log.error({ err }, 'health check failed')
      return await reply.code(503).send({ status: 'unavailable' })
    }
  })

  return app
}
