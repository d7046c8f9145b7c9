import type {
  FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, onRequestHookHandler, RouteGenericInterface, RouteShorthandOptions
} from 'fastify'
import type { Authenticate } from './authenticate.js'
import type { AccountDecoratorName } from './decorators.js'
import { setupError } from '../common/errors.js'
import { accountOf, authenticate, failClosed, requireMfa as requireMfaHook, requireRecentAuthentication, routeName } from './authenticate.js'
import { AUTHENTICATE_ERRORS, problemResponses } from '../http/openapi.js'
import type { PasswordAuthAccount } from '../stores/types.js'

/** A request behind the guard: its account is there, not null. */
export type AuthenticatedRequest<RouteGeneric extends RouteGenericInterface = RouteGenericInterface> =
  FastifyRequest<RouteGeneric> & { [Name in AccountDecoratorName]: PasswordAuthAccount }

export type AuthenticatedHandler<RouteGeneric extends RouteGenericInterface = RouteGenericInterface> =
  (this: FastifyInstance, request: AuthenticatedRequest<RouteGeneric>, reply: FastifyReply<RouteGeneric>) => unknown

/**
 * Route options, and `maxAuthAge`: seconds since the last password proof beyond which the route answers 401
 * REAUTHENTICATION_REQUIRED; `requireMfa`: a session without a second factor gets 401 MFA_REQUIRED.
 */
export type AuthenticatedOptions = RouteShorthandOptions & { maxAuthAge?: number, requireMfa?: boolean }

/**
 * Route options with the guard first in `onRequest` and the handler that relies on it. The handler is
 * typed for any route, so `app.get('/orders/:id', authenticated<{ Params: … }>(…))` type-checks without
 * repeating the generic on `app.get`; the handler you pass sees `RouteGeneric`.
 */
export interface AuthenticatedRoute {
  onRequest: Authenticate | Array<Authenticate | onRequestHookHandler>
  schema?: FastifySchema
  handler: (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
}

/**
 * Route options for a guarded route whose handler sees the account as non-null:
 * `app.get('/me', authenticated(async (request) => request.account.email))`, or with options,
 * `authenticated({ schema }, handler)`. The guard runs first in `onRequest`; the guard's 401 and 503 are
 * added to `schema.response` (yours win). If the handler is reached without an account all the same,
 * it answers 503 and never runs. `maxAuthAge` (seconds) also demands a recent password proof
 * (`requireRecentAuthentication`): a sensitive action such as changing an e-mail address.
 */
export function authenticated<RouteGeneric extends RouteGenericInterface = RouteGenericInterface> (
  handler: AuthenticatedHandler<RouteGeneric>
): AuthenticatedRoute
export function authenticated<RouteGeneric extends RouteGenericInterface = RouteGenericInterface, Options extends AuthenticatedOptions = AuthenticatedOptions> (
  options: Options, handler: AuthenticatedHandler<RouteGeneric>
): Omit<Options, 'onRequest' | 'schema' | 'handler' | 'maxAuthAge' | 'requireMfa'> & AuthenticatedRoute
export function authenticated (
  first: AuthenticatedOptions | AuthenticatedHandler, second?: AuthenticatedHandler
): AuthenticatedRoute {
  const [options, handler] = typeof first === 'function' ? [{}, first] : [first, second!]
  const { onRequest, schema, maxAuthAge, requireMfa = false, ...rest } = options as AuthenticatedOptions & { handler?: unknown }
  delete rest.handler
  if (typeof requireMfa !== 'boolean') throw new TypeError('authenticated(): requireMfa must be true or false')
  const hooks = [
    ...requireMfa ? [requireMfaHook] : [],
    ...maxAuthAge === undefined ? [] : [requireRecentAuthentication(maxAuthAge)],
    ...onRequest === undefined ? [] : [onRequest].flat() as onRequestHookHandler[]
  ]
  const codes = [...AUTHENTICATE_ERRORS, ...maxAuthAge === undefined ? [] : ['FST_PWAUTH_REAUTHENTICATION_REQUIRED' as const],
    ...requireMfa ? ['FST_PWAUTH_MFA_REQUIRED' as const] : []]
  const responses = problemResponses(codes)
  return {
    ...rest,
    onRequest: hooks.length === 0 ? authenticate : [authenticate, ...hooks],
    schema: { ...schema, response: { ...responses, ...schema?.response as object } },
    handler: async function authenticatedHandler (request, reply) {
      if (accountOf(request) === null) {
        return await failClosed(request, reply, setupError('FST_PWAUTH_GUARD_SKIPPED', routeName(request)))
      }
      return await handler.call(this, request as AuthenticatedRequest, reply)
    }
  }
}
