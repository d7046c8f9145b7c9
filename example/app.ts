import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import passwordAuth, { authenticate, passwordAuthClientErrorHandler, type PasswordAuthOptions } from '../lib/index.js'
import type { ServerTimeouts } from './timeouts.js'
import { Account } from './account-schema.js'

export interface AppOptions {
  auth: PasswordAuthOptions
  logger?: FastifyServerOptions['logger']
  /**
   * Fastify's two log lines per request ("incoming request", "request completed"); default off. The
   * plugin's audit events and errors are logged either way.
   */
  requestLogging?: boolean
  /** Server timeouts (example/timeouts.ts). */
  server?: ServerTimeouts
  /** Answers GET /health: resolves when the stores are reachable, rejects when not. */
  healthCheck?: () => Promise<void>
}

const Health = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['ok', 'unavailable'] } },
  required: ['status'],
  additionalProperties: false
} as const

/** The demo server: the plugin, GET /me, GET /health and the OpenAPI document with its page at /docs. */
export async function buildApp ({ auth, logger = false, requestLogging = false, server = {}, healthCheck = async () => {} }: AppOptions): Promise<FastifyInstance> {
  // Requests Node cannot parse get problem+json too. Request logging off by default: two serialised log
  // lines per request cost more than an authenticated request itself (README "Try the demo server").
  const app = Fastify({
    ...server,
    logger,
    logController: new LogController({ disableRequestLogging: !requestLogging }),
    clientErrorHandler: passwordAuthClientErrorHandler
  })

  await app.register(swagger, {
    openapi: {
      info: { title: 'fastify-password-auth example', version: '1.0.0' },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } }
    },
    // Logout reads the bearer token itself (no guard): the page's "Authorize" must send it there too.
    transform: ({ schema, url }) => ({ schema: url.endsWith('/Logout') ? { ...schema, security: [{ bearerAuth: [] }] } : schema, url })
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  await app.register(passwordAuth, auth)

  app.get('/me', {
    onRequest: authenticate,
    schema: { summary: 'The signed-in account', tags: ['Example'], security: [{ bearerAuth: [] }], response: { 200: Account } }
  }, async (request) => request.account)

  app.get('/health', {
    schema: { summary: 'Liveness and store reachability', tags: ['Example'], response: { 200: Health, 503: Health } }
  }, async (request, reply) => {
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
