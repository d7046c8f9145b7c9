import fastifyRateLimit from '@fastify/rate-limit'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { requestError } from '../common/errors.js'
import { acceptJsonOnly, forgetContentType, ignoreBody } from '../http/body-parsers.js'
import type { ErrorHandler } from '../http/problem.js'
import { sendUnavailable } from '../http/problem.js'
import { validatorCompiler } from '../http/validation.js'
import type { RateLimitOptions } from '../throttle/options.js'
import type { ResolvedKey } from '../tokens/keys.js'
import { registerAccountExport } from './account/account-export.js'
import { registerChangeEmail, registerVerifyEmailChange } from './account/change-email.js'
import { registerChangePassword } from './security/change-password.js'
import type { RouteContext } from './context.js'
import { registerForgotPassword } from './recovery/forgot-password.js'
import { registerJwks } from './jwks.js'
import { registerLoginMfa } from './sign-in/login-mfa.js'
import { registerLogin } from './sign-in/login.js'
import { registerLogout } from './sessions/logout.js'
import { registerMfaSetup, registerMfaSwitches } from './security/mfa.js'
import { registerAddPasskey, registerLoginMfaOptions, registerLoginPasskey, registerPasskeyBodiless } from './security/passkeys.js'
import type { ResolvedRoutes } from './options.js'
import { registerReauthenticate } from './security/reauthenticate.js'
import { registerRefresh } from './sessions/refresh.js'
import { registerDeleteAccount } from './account/delete-account.js'
import { registerRegister } from './sign-up/register.js'
import { registerRevertEmailChange } from './account/revert-email-change.js'
import { registerResetPassword } from './recovery/reset-password.js'
import { registerSessionRoutes } from './sessions/sessions.js'
import { registerTrustedDeviceRoutes } from './security/trusted-devices.js'
import { registerVerifyEmail } from './sign-up/verify-email.js'

interface Settings {
  routes: ResolvedRoutes
  /** Answers every error of the routes as problem+json. */
  answerError: ErrorHandler
  rateLimit: RateLimitOptions | false
  /** The JWKS document's path and keys, when it is published. */
  jwks: { path: string | undefined, keys: ResolvedKey[] }
}

/**
 * Every route of the plugin, under its prefix, in the Fastify context its needs put it in: how its body is
 * read, whether a per-IP limit counts it, whether a full hashing queue sheds it.
 */
export async function registerRoutes (fastify: FastifyInstance, context: RouteContext, { routes: options, answerError, rateLimit, jwks }: Settings): Promise<void> {
  // global: one counter per client shared by the routes of the context it is registered in, and only them.
  const rateLimitAnswer = {
    global: true,
    hook: 'onRequest',
    errorResponseBuilder: (_request: unknown, { ttl }: { ttl: number }) =>
      requestError('FST_PWAUTH_TOO_MANY_ATTEMPTS', { retryAfter: Math.max(1, Math.ceil(ttl / 1000)) })
  } as const
  const { hashQueue, secondFactor, account, passkeys } = context
  const { passwordReset, registration, sessionRoutes } = options

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
      if (rateLimit !== false) {
        await app.register(fastifyRateLimit, { ...rateLimit, ...rateLimitAnswer })
      }
      registerLogin(app, context)
      registerChangePassword(app, context)
      // A password check like Login's: the same per-IP limit and load shedding.
      if (sessionRoutes) registerReauthenticate(app, context)
      if (passwordReset !== undefined) {
        registerForgotPassword(app, context, passwordReset)
        registerResetPassword(app, context, passwordReset)
      }
      if (registration !== undefined) {
        registerRegister(app, context, registration)
        registerVerifyEmail(app, context)
      }
      // Confirm, Disable and RecoveryCodes take the password: a password check like Login's.
      if (secondFactor !== undefined) registerMfaSwitches(app, { ...context, secondFactor })
      // RevertEmailChange sets a new password, ChangeEmail and DeleteAccount take the password: argon2, so they live here.
      if (account.emailChange !== undefined) {
        registerRevertEmailChange(app, context, account.emailChange)
        registerChangeEmail(app, context, account.emailChange)
      }
      if (account.deletion !== undefined) registerDeleteAccount(app, context, account.deletion)
      if (passkeys !== undefined) {
        // A sign-in: Login's per-IP limit.
        registerLoginPasskey(app, { ...context, passkeys })
        // Adding a passkey takes the password: a password check like Login's.
        registerAddPasskey(app, { ...context, passkeys })
      }
    })

    if (account.emailChange !== undefined) {
      const { emailChange } = account
      // No argon2: outside Login's context, with a per-IP limit of its own.
      await routes.register(async function emailChangeRoutes (app) {
        acceptJsonOnly(app)
        app.addHook('onRequest', noStore)
        if (rateLimit !== false) await app.register(fastifyRateLimit, { ...rateLimit, ...rateLimitAnswer })
        registerVerifyEmailChange(app, context, emailChange)
      })
    }

    if (context.refresh) {
      // Refresh runs no argon2 and has no per-IP limit of its own: it is outside Login's context.
      await routes.register(async function refreshRoutes (app) {
        acceptJsonOnly(app)
        app.addHook('onRequest', noStore)
        registerRefresh(app, context)
      })
    }

    if (secondFactor !== undefined) {
      // No argon2: outside Login's context (and its load shedding), with a per-IP limit of its own.
      await routes.register(async function codeRoutes (app) {
        acceptJsonOnly(app)
        app.addHook('onRequest', noStore)
        if (rateLimit !== false) await app.register(fastifyRateLimit, { ...rateLimit, ...rateLimitAnswer })
        registerLoginMfa(app, { ...context, secondFactor })
      })
    }

    if (passkeys !== undefined) {
      // LoginMfa/Options: no argon2; it stores a challenge, so a per-IP limit of its own.
      if (secondFactor !== undefined) {
        await routes.register(async function passkeyRoutes (app) {
          acceptJsonOnly(app)
          app.addHook('onRequest', noStore)
          if (rateLimit !== false) await app.register(fastifyRateLimit, { ...rateLimit, ...rateLimitAnswer })
          registerLoginMfaOptions(app, { ...context, passkeys })
        })
      }
      await routes.register(async function passkeyBodilessRoutes (app) {
        ignoreBody(app)
        app.addHook('onRequest', (request, reply, done) => {
          reply.header('cache-control', 'no-store')
          forgetContentType(request)
          done()
        })
        if (rateLimit !== false) await app.register(fastifyRateLimit, { ...rateLimit, ...rateLimitAnswer })
        registerPasskeyBodiless(app, { ...context, passkeys })
      })
    }

    // The routes without a body: whatever one comes is read up to the limit and dropped, its media type ignored.
    await routes.register(async function bodilessRoutes (app) {
      ignoreBody(app)
      app.addHook('onRequest', (request, reply, done) => {
        reply.header('cache-control', 'no-store')
        forgetContentType(request)
        done()
      })
      registerLogout(app, context)
      if (sessionRoutes) registerSessionRoutes(app, context)
      if (secondFactor !== undefined) registerMfaSetup(app, { ...context, secondFactor })
      if (account.export !== undefined) registerAccountExport(app, context, account.export)
      if (sessionRoutes && context.trustedDevices !== undefined) registerTrustedDeviceRoutes(app, context, context.trustedDevices)
    })
  }, { prefix: options.prefix })

  if (jwks.path !== undefined) registerJwks(fastify, jwks.path, jwks.keys)
}
