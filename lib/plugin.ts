/*
 * Code map. plugin.ts (this file) wires the parts; index.ts is the public API; options.ts checks the options.
 *
 * lib/ is a ladder: each room imports only from the floors below its own (the lint keeps it so: LADDER in
 * .ci/eslint.config.js). Top floor first, roughly the order a request goes down:
 *
 *   index.ts     the public API: the fp wrapper, the exports, the type augmentation
 *   plugin.ts    wires the parts together at registration
 *   options.ts   the plugin's options: the top level checked, each concern's resolved at its own door
 *   routes/      one file per route (Login, ChangePassword, Logout, Refresh, Reauthenticate, Sessions,
 *                ForgotPassword, ResetPassword, Register, VerifyEmail, LoginMfa, Mfa/*, JWKS) and their shared context
 *   guard/ password/ mfa/ messages/
 *     guard/     `authenticate` and `authenticated()` for host routes, the token check, and the decorators
 *     password/  argon2id hashing, its queue, the policy, the credential check, legacy/ hash formats
 *     mfa/       second factors: TOTP (otplib), sealed secrets, hashed recovery codes, the code counters
 *     messages/  what the host's `deliver` is handed, after the answer, and the per-address mail limit
 *   throttle/ session/
 *     throttle/  attempt counting per e-mail and per known device, device tokens, the per-IP limit's options
 *     session/   sessions: start, refresh with rotating refresh tokens, end; the token body; the account rule
 *   tokens/ http/ testing/
 *     tokens/    signing keys, access tokens (JWT) and one-time tokens (reset and verification links, login challenges)
 *     http/      HTTP plumbing: body parsers, schemas and validation, problem+json, OpenAPI, the secure cookie
 *                (refresh and device tokens in cookie mode), log redaction
 *     testing/   the store contract suites (`fastify-password-auth/testing`)
 *   stores/      the store interfaces (types.ts), memory/, postgres/, redis/, the store-call deadline, and the
 *                attempt arithmetic every attempt store follows (attempt-rules.ts, mirrored in SQL and Lua)
 *   common/      the ground floor: every error (errors.ts), every event (events.ts), the shared option rules
 *
 * A Login request: http/ (body parser, validation) → routes/login.ts → throttle/ and password/
 * (credential check) → session/ (start) → tokens/ (access token) → http/ (answer or problem+json).
 * A guarded host request: guard/authenticate.ts → guard/token-check.ts (tokens/, stores/) → your handler.
 */
import { isIP } from 'node:net'
import fastifyRateLimit from '@fastify/rate-limit'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { createTokenCheck } from './guard/token-check.js'
import { acceptJsonOnly, BODY_LIMIT, forgetContentType, ignoreBody } from './http/body-parsers.js'
import { createPasswordCheck } from './password/credential-check.js'
import { checkDecoratorNames } from './guard/decorators.js'
import { asRequestError, invalidOption, requestError } from './common/errors.js'
import { createEventEmitter } from './common/events.js'
import { authenticate, createGuardCheck, createGuardVerify, registerGuardState } from './guard/authenticate.js'
import { HashQueue } from './password/hash-queue.js'
import { resolveOptions, type PasswordAuthOptions } from './options.js'
import { PasswordHasher, type HashingStats } from './password/hasher.js'
import { createPasswordPolicy } from './password/policy.js'
import { createErrorHandler, createProblemHeaders, createProblemSender, sendUnavailable } from './http/problem.js'
import { createSecureCookie } from './http/secure-cookie.js'
import { RefreshTokens } from './session/refresh-tokens.js'
import { createOutbox } from './messages/outbox.js'
import { MailLimit } from './messages/mail-limit.js'
import { registerChangePassword } from './routes/change-password.js'
import { registerForgotPassword } from './routes/forgot-password.js'
import { registerResetPassword } from './routes/reset-password.js'
import { registerRegister } from './routes/register.js'
import { registerVerifyEmail } from './routes/verify-email.js'
import type { RouteContext } from './routes/context.js'
import { registerJwks } from './routes/jwks.js'
import { registerLogin } from './routes/login.js'
import { registerLogout } from './routes/logout.js'
import { registerReauthenticate } from './routes/reauthenticate.js'
import { registerRefresh } from './routes/refresh.js'
import { registerSessionRoutes } from './routes/sessions.js'
import { createSessionApi, type SessionApi } from './session/host-api.js'
import { SessionService } from './session/service.js'
import { createStoreCall } from './stores/store-call.js'
import { AttemptThrottle } from './throttle/attempt-throttle.js'
import { attemptLeaseMs } from './password/attempt-lease.js'
import { DeviceTokens } from './throttle/device-tokens.js'
import { createKnownDevices, deviceCookieName } from './throttle/known-devices.js'
import { AccessTokens } from './tokens/access-tokens.js'
import { purposeKey } from './tokens/keys.js'
import { OneTimeTokens } from './tokens/one-time-tokens.js'
import { validatorCompiler } from './http/validation.js'
import { SecondFactor } from './mfa/second-factor.js'
import { registerLoginMfa } from './routes/login-mfa.js'
import { registerMfaRoutes, registerMfaSetup } from './routes/mfa.js'

/**
 * Warns about host server settings that undo the plugin's limits: with Fastify's default requestTimeout
 * of 0 a client can hold a connection (and a file descriptor) open forever by sending its body one byte
 * at a time, and enough such clients starve the server. Only once the server listens where others can
 * reach it: on loopback (a quick start, tests) the warning would be noise.
 */
export function warnAboutHostSettings (fastify: FastifyInstance): void {
  // Fastify's initialConfig has requestTimeout at run time; its type leaves it out.
  if ((fastify.initialConfig as { requestTimeout?: number }).requestTimeout !== 0) return
  fastify.addHook('onListen', function warnIfExposed (done) {
    const exposed = fastify.addresses().some((info) => typeof info === 'object' && isIP(info.address) !== 0 && !LOOPBACK.test(info.address))
    if (exposed) {
      fastify.log.warn('fastify-password-auth: the server\'s requestTimeout is 0 (Fastify\'s default), so slow clients can hold ' +
      'connections open forever; set requestTimeout (e.g. 10000 ms) and connectionTimeout in Fastify\'s options ' +
      '(see the README, "Server timeouts")')
    }
    done()
  })
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/

/** The host API on `fastify.passwordAuth`. */
export interface PasswordAuthDecorator {
  /** argon2 work done so far, for metrics and capacity planning. */
  stats (): HashingStats
  /** Sessions: start one for an account you authenticated, list, end one or all. */
  sessions: SessionApi
}

/** Signs and verifies a probe, so that keys that cannot work together fail at registration. */
function createAccessTokens (...args: ConstructorParameters<typeof AccessTokens>): AccessTokens {
  try {
    const tokens = new AccessTokens(...args)
    tokens.verify(tokens.issue({ accountId: 'probe', sessionId: 'probe', credentialVersion: 0 }).accessToken)
    return tokens
  } catch (err) {
    throw invalidOption(`the jwt keys cannot sign and verify tokens (${(err as Error).message})`)
  }
}

export async function passwordAuth (fastify: FastifyInstance, options: PasswordAuthOptions): Promise<void> {
  const config = resolveOptions(options)
  const names = config.decorators
  checkDecoratorNames(fastify, names)
  warnAboutHostSettings(fastify)
  const { accounts } = config
  const hashQueue = new HashQueue(config.hashing.concurrency, config.hashing.maxQueue)
  const hasher = new PasswordHasher(config.argon2, config.pepper, hashQueue, { legacyHashes: config.legacyHashes, log: fastify.log })
  const accessTokens = createAccessTokens(config.keys, config.accessToken)
  const storeCall = createStoreCall(config.storeTimeout)
  const emit = createEventEmitter(config.onEvent, fastify.log)
  const sessionService = new SessionService({
    store: config.sessions,
    accounts,
    accessTokens,
    refreshTokens: new RefreshTokens(config.keys),
    storeCall,
    emit,
    policy: config.refresh.policy,
    refresh: config.refresh.enabled,
    log: fastify.log
  })
  const answerError = createErrorHandler(createProblemSender(config.realm))
  const problemHeaders = createProblemHeaders(config.realm)
  const checkAccessToken = createTokenCheck(accessTokens, accounts, config.sessions, storeCall)
  // The full prefix: the host's, if it registered the plugin under one, and ours.
  const fullPrefix = fastify.prefix + config.prefix
  const cookie = config.refresh.cookie === undefined ? undefined : createSecureCookie(config.refresh.cookie, fullPrefix)
  const knownDevices = createKnownDevices(new DeviceTokens(config.keys, config.deviceTtl),
    config.refresh.cookie === undefined ? undefined : createSecureCookie(deviceCookieName(config.refresh.cookie), fullPrefix))
  const attemptKey = purposeKey(config.keys[0]!, 'attempt-key')
  const throttle = new AttemptThrottle(config.attempts, { ...config.throttle, leaseMs: attemptLeaseMs(config) }, storeCall, attemptKey)
  const context: RouteContext = {
    cookie,
    accounts,
    sessionService,
    accessTokens,
    hasher,
    policy: createPasswordPolicy(config.passwordPolicy),
    checkPassword: createPasswordCheck({
      accounts,
      hasher,
      throttle,
      storeCall,
      emit,
      dummyHash: await hasher.createDummyHash()
    }),
    knownDevices,
    throttle,
    outbox: createOutbox(config.deliver, emit, fastify.log),
    mailLimit: new MailLimit(config.attempts, config.mailLimit, storeCall, attemptKey),
    oneTimeTokens: new OneTimeTokens(config.oneTimeTokens, config.keys[0]!, storeCall),
    passwordReset: config.passwordReset,
    registration: config.registration,
    secondFactor: config.mfa === undefined
      ? undefined
      : new SecondFactor({
        store: config.mfaStore,
        attempts: config.attempts,
        keys: config.keys,
        storeCall,
        issuer: config.mfa.issuer,
        throttle: { ...config.throttle, leaseMs: attemptLeaseMs(config) }
      }),
    mfaTtlMs: config.mfa?.ttlMs ?? 0,
    storeCall,
    emit,
    refresh: config.refresh.enabled,
    upgradeHashes: config.upgradeHashes,
    reauthMaxAge: config.reauthMaxAge
  }

  fastify.decorateRequest(names.account, null)
  fastify.decorateRequest(names.session, null)
  registerGuardState(fastify, {
    check: createGuardCheck(checkAccessToken, answerError, { accountKey: names.account, sessionKey: names.session }),
    verify: createGuardVerify(checkAccessToken, (error, request) => {
      const problem = asRequestError(error, request, BODY_LIMIT)
      return Object.assign(problem, { headers: problemHeaders(problem) })
    }, { accountKey: names.account, sessionKey: names.session }),
    accountKey: names.account,
    sessionKey: names.session,
    answerError
  })
  if (names.authenticate !== false) fastify.decorate(names.authenticate, authenticate)
  fastify.decorate('passwordAuth', {
    stats: () => hasher.stats(),
    sessions: createSessionApi({ sessionService, accounts, storeCall, cookie })
  } satisfies PasswordAuthDecorator)

  // global: one counter per client shared by the routes of the context it is registered in, and only them.
  const rateLimitAnswer = {
    global: true,
    hook: 'onRequest',
    errorResponseBuilder: (_request: unknown, { ttl }: { ttl: number }) =>
      requestError('FST_PWAUTH_TOO_MANY_ATTEMPTS', { retryAfter: Math.max(1, Math.ceil(ttl / 1000)) })
  } as const

  await fastify.register(async function passwordAuthRoutes (routes) {
    routes.setValidatorCompiler(validatorCompiler)
    routes.setErrorHandler(answerError)
    // Every answer says no-store. One callback hook per context, not an async one and not one more per
    // concern: each hook costs every request of the context a call.
    const noStore: onRequestHookHandler = (_request, reply, done) => { reply.header('cache-control', 'no-store'); done() }

    await routes.register(async function credentialRoutes (app) {
      acceptJsonOnly(app)
      // With the hashing queue full, shed at once: no body read or parsed, no per-IP count, no throttle.
      app.addHook('onRequest', (_request, reply, done) => {
        reply.header('cache-control', 'no-store')
        if (hashQueue.shedIfFull()) sendUnavailable(reply)
        else done()
      })
      if (config.rateLimit !== false) {
        await app.register(fastifyRateLimit, { ...config.rateLimit, ...rateLimitAnswer })
      }
      registerLogin(app, context)
      registerChangePassword(app, context)
      // A password check like Login's: the same per-IP limit and load shedding.
      if (config.sessionRoutes) registerReauthenticate(app, context)
      if (context.passwordReset !== undefined) {
        registerForgotPassword(app, context)
        registerResetPassword(app, context)
      }
      if (context.registration !== undefined) {
        registerRegister(app, context)
        registerVerifyEmail(app, context)
      }
    })

    if (config.refresh.enabled) {
      // Refresh runs no argon2 and has no per-IP limit of its own: it is outside Login's context.
      await routes.register(async function refreshRoutes (app) {
        acceptJsonOnly(app)
        app.addHook('onRequest', noStore)
        registerRefresh(app, context)
      })
    }

    const { secondFactor } = context
    if (secondFactor !== undefined) {
      // No argon2: outside Login's context (and its load shedding), with a per-IP limit of its own.
      await routes.register(async function codeRoutes (app) {
        acceptJsonOnly(app)
        app.addHook('onRequest', noStore)
        if (config.rateLimit !== false) await app.register(fastifyRateLimit, { ...config.rateLimit, ...rateLimitAnswer })
        registerLoginMfa(app, { ...context, secondFactor })
        registerMfaRoutes(app, { ...context, secondFactor })
      })
    }

    await routes.register(async function sessionRoutes (app) {
      ignoreBody(app)
      app.addHook('onRequest', (request, reply, done) => {
        reply.header('cache-control', 'no-store')
        forgetContentType(request)
        done()
      })
      registerLogout(app, context)
      if (config.sessionRoutes) registerSessionRoutes(app, context)
      if (secondFactor !== undefined) registerMfaSetup(app, { ...context, secondFactor })
    })
  }, { prefix: config.prefix })

  if (config.jwksPath !== undefined) registerJwks(fastify, config.jwksPath, config.keys)
}
