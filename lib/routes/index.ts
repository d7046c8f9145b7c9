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
import { registerAddPasskey, registerPasskeyBodiless } from './security/passkeys.js'
import { registerLoginMfaOptions } from './sign-in/login-mfa-options.js'
import { registerLoginPasskey, registerLoginPasskeyOptions } from './sign-in/login-passkey.js'
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

// global: every route of the context it is registered in, and of the contexts inside it, is counted.
const RATE_LIMIT_ANSWER = {
  global: true,
  hook: 'onRequest',
  errorResponseBuilder: (_request: unknown, { ttl }: { ttl: number }) =>
    requestError('FST_PWAUTH_TOO_MANY_ATTEMPTS', { retryAfter: Math.max(1, Math.ceil(ttl / 1000)) })
} as const

/** A route without a body: whatever one comes is read up to the limit and dropped, its media type ignored. */
function bodiless (app: FastifyInstance): void {
  ignoreBody(app)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('cache-control', 'no-store')
    forgetContentType(request)
    done()
  })
}

/**
 * Every route of the plugin, under its prefix, in the Fastify context its needs put it in: how its body is
 * read, whether a per-IP limit counts it, whether a full hashing queue sheds it.
 */
export async function registerRoutes (fastify: FastifyInstance, context: RouteContext, { routes: options, answerError, rateLimit, jwks }: Settings): Promise<void> {
  const { hashQueue, secondFactor, account, passkeys } = context
  const { passwordReset, registration, sessionRoutes } = options

  await fastify.register(async function passwordAuthRoutes (routes) {
    routes.setValidatorCompiler(validatorCompiler)
    routes.setErrorHandler(answerError)
    // Every answer says no-store. One callback hook per context, not an async one and not one more per
    // concern: each hook costs every request of the context a call.
    const noStore: onRequestHookHandler = (_request, reply, done) => { reply.header('cache-control', 'no-store'); done() }

    // The per-IP limit, registered once: every route in here counts against one budget per client (one store,
    // memory or Redis). Its check is added to each route, so it runs after the hooks of the route's own context
    // (a full hashing queue sheds a request before it is counted).
    await routes.register(async function limitedRoutes (limited) {
      if (rateLimit !== false) await limited.register(fastifyRateLimit, { ...rateLimit, ...RATE_LIMIT_ANSWER })

      await limited.register(async function credentialRoutes (app) {
        acceptJsonOnly(app)
        // With the hashing queue full, shed at once: no body read or parsed, no per-IP count, no throttle.
        app.addHook('onRequest', (_request, reply, done) => {
          reply.header('cache-control', 'no-store')
          if (hashQueue.shedIfFull()) sendUnavailable(reply)
          else done()
        })
        registerLogin(app, context)
        registerChangePassword(app, context)
        // A password check like Login's: load shedding.
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
          registerLoginPasskey(app, { ...context, passkeys })
          // Adding a passkey takes the password: a password check like Login's.
          registerAddPasskey(app, { ...context, passkeys })
        }
      })

      // The JSON routes that run no argon2: outside Login's context and its load shedding.
      await limited.register(async function jsonRoutes (app) {
        acceptJsonOnly(app)
        app.addHook('onRequest', noStore)
        if (account.emailChange !== undefined) registerVerifyEmailChange(app, context, account.emailChange)
        if (secondFactor !== undefined) registerLoginMfa(app, { ...context, secondFactor })
        // LoginMfa/Options stores a challenge.
        if (passkeys !== undefined && secondFactor !== undefined) registerLoginMfaOptions(app, { ...context, passkeys })
      })

      if (passkeys !== undefined) {
        // The passkey routes without a body; their options store challenges.
        await limited.register(async function passkeyBodilessRoutes (app) {
          bodiless(app)
          registerLoginPasskeyOptions(app, { ...context, passkeys })
          registerPasskeyBodiless(app, { ...context, passkeys })
        })
      }
    })

    if (context.refresh) {
      // Refresh runs no argon2 and counts against no per-IP limit.
      await routes.register(async function refreshRoutes (app) {
        acceptJsonOnly(app)
        app.addHook('onRequest', noStore)
        registerRefresh(app, context)
      })
    }

    // The routes without a body and without a per-IP limit.
    await routes.register(async function bodilessRoutes (app) {
      bodiless(app)
      registerLogout(app, context)
      if (sessionRoutes) registerSessionRoutes(app, context)
      if (secondFactor !== undefined) registerMfaSetup(app, { ...context, secondFactor })
      if (account.export !== undefined) registerAccountExport(app, context, account.export)
      if (sessionRoutes && context.trustedDevices !== undefined) registerTrustedDeviceRoutes(app, context, context.trustedDevices)
    })
  }, { prefix: options.prefix })

  if (jwks.path !== undefined) registerJwks(fastify, jwks.path, jwks.keys)
}
