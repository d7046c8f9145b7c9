import fastifyJwt from '@fastify/jwt'
import fastifyRateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createTokenCheck } from './access-token.js'
import { acceptJsonOnly, ignoreBody } from './body-parsers.js'
import { createPasswordCheck } from './credentials.js'
import { asRequestError, createErrorHandler } from './error-handler.js'
import { invalidOption, requestError } from './errors.js'
import { createEventEmitter } from './events.js'
import { HashQueue } from './hash-queue.js'
import { resolveOptions, type PasswordAuthOptions } from './options.js'
import { PasswordHasher, type HashingStats } from './password.js'
import { createPasswordPolicy } from './password-policy.js'
import { createProblemSender } from './problem.js'
import { createStoreCall } from './store-call.js'
import { registerChangePassword } from './routes/change-password.js'
import type { RouteContext } from './routes/context.js'
import { registerLogin } from './routes/login.js'
import { registerLogout } from './routes/logout.js'
import { EmailThrottle } from './throttle.js'
import { jwtPluginOptions, TokenService, type JwtSignerVerifier, type TokenConfig } from './tokens.js'
import { validatorCompiler } from './validation.js'

/** The guard for host routes: `{ onRequest: fastify.authenticate }`. Sets `request.account`. */
export type Authenticate = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>

/** `fastify.passwordAuth`: what the plugin lets the host observe. */
export interface PasswordAuthDecorator {
  /** argon2 work done so far, for metrics and capacity planning. */
  stats (): HashingStats
}

/**
 * @fastify/jwt is registered in a context of its own, under a namespace, so it never clashes with a
 * host's own @fastify/jwt; we keep only its signer and verifier. A key pair that cannot verify its own
 * token fails here.
 */
async function createTokenService (fastify: FastifyInstance, config: TokenConfig): Promise<TokenService> {
  let jwt: JwtSignerVerifier | undefined
  try {
    await fastify.register(async function tokenSigning (child) {
      const options = jwtPluginOptions(config)
      await child.register(fastifyJwt, options)
      jwt = (child.jwt as unknown as Record<string, JwtSignerVerifier>)[options.namespace]
    })
    const tokens = new TokenService(jwt as JwtSignerVerifier, config.expiresIn)
    tokens.verify(tokens.issue({ id: 'probe', email: 'probe@invalid', active: true, credentialVersion: 0 }).accessToken)
    return tokens
  } catch (err) {
    throw invalidOption(`the jwt keys cannot sign and verify ${config.algorithm} tokens (${(err as Error).message})`)
  }
}

export async function passwordAuth (fastify: FastifyInstance, options: PasswordAuthOptions): Promise<void> {
  const config = resolveOptions(options)
  const { accounts, revocations } = config
  const hasher = new PasswordHasher(config.argon2, config.pepper, new HashQueue(config.hashing.concurrency, config.hashing.maxQueue))
  const tokens = await createTokenService(fastify, config.token)
  const storeCall = createStoreCall(config.storeTimeout)
  const checkAccessToken = createTokenCheck(tokens, accounts, revocations, storeCall)
  const sendProblem = createProblemSender(config.realm)
  const context: RouteContext = {
    accounts,
    revocations,
    hasher,
    tokens,
    policy: createPasswordPolicy(config.passwordPolicy),
    checkPassword: createPasswordCheck({
      accounts,
      hasher,
      throttle: new EmailThrottle(config.attempts, config.throttle, storeCall),
      storeCall,
      dummyHash: await hasher.createDummyHash()
    }),
    checkAccessToken,
    storeCall,
    emit: createEventEmitter(config.onEvent)
  }

  const authenticate: Authenticate = async (request, reply) => {
    try {
      request.account = (await checkAccessToken(request)).account
    } catch (err) {
      return sendProblem(reply, asRequestError(err, request))
    }
  }
  fastify.decorateRequest('account', null)
  fastify.decorate('authenticate', authenticate)
  fastify.decorate('passwordAuth', { stats: () => hasher.stats() } satisfies PasswordAuthDecorator)

  await fastify.register(async function passwordAuthRoutes (routes) {
    routes.setValidatorCompiler(validatorCompiler)
    routes.setErrorHandler(createErrorHandler(sendProblem))
    routes.addHook('onRequest', async (_request, reply) => { reply.header('cache-control', 'no-store') })

    await routes.register(async function credentialRoutes (app) {
      acceptJsonOnly(app)
      if (config.rateLimit !== false) {
        // global: one counter per client shared by both routes of this context, and only them.
        await app.register(fastifyRateLimit, {
          ...config.rateLimit,
          global: true,
          hook: 'onRequest',
          errorResponseBuilder: (_request, { ttl }) =>
            requestError('FST_PWAUTH_TOO_MANY_ATTEMPTS', { retryAfter: Math.max(1, Math.ceil(ttl / 1000)) })
        })
      }
      registerLogin(app, context)
      registerChangePassword(app, context)
    })

    await routes.register(async function sessionRoutes (app) {
      ignoreBody(app)
      registerLogout(app, context)
    })
  }, { prefix: config.prefix })
}
