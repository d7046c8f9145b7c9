import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { setupError } from '../common/errors.js'
import { requestError, type PasswordAuthError } from '../common/errors.js'
import { sendUnavailable, type ErrorHandler } from '../http/problem.js'
import type { PasswordAuthAccount } from '../stores/types.js'
import type { CheckAccessToken, CheckedToken, PasswordAuthSession } from './token-check.js'

/** The guard for host routes: `{ onRequest: authenticate }`. Sets `request.account`. */
export type Authenticate = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | void>

/**
 * The guard as Fastify calls a hook: with `done`. A check that ends in this turn (memory stores) calls `done`
 * and returns nothing, so the request goes on without a promise or a microtask turn; one that waits for a
 * store returns its promise, which Fastify awaits (and `done` is not called). Called without `done` (a host's
 * own `await authenticate(request, reply)`), it always returns a promise.
 */
type GuardHook = (request: FastifyRequest, reply: FastifyReply, done?: HookHandlerDoneFunction) => Promise<FastifyReply | void> | FastifyReply | undefined

/** What the plugin leaves in the context it is registered in, for the guard to find. */
export interface GuardState {
  /** The token check of this registration, as a hook; sets the account on `request[accountKey]`. */
  check: GuardHook
  /** The same check, throwing its error (with the answer's headers) instead of answering. */
  verify: (request: FastifyRequest) => Promise<void>
  accountKey: string
  sessionKey: string
  /** Answers an error as problem+json with this registration's realm. */
  answerError: ErrorHandler
}

const GUARD_STATE = Symbol('fastify-password-auth')

/** The state of the registration in `instance`'s context or its nearest ancestor, if any. */
export function guardStateOf (instance: FastifyInstance): GuardState | undefined {
  return (instance as unknown as Record<symbol, GuardState | undefined>)[GUARD_STATE]
}

export function registerGuardState (fastify: FastifyInstance, state: GuardState): void {
  fastify.decorate(GUARD_STATE, state)
}

const reported = new WeakMap<FastifyInstance, Set<string>>()

/** Logs, once per route, what the host has to do. */
function reportOnce (request: FastifyRequest, error: Error): void {
  let routes = reported.get(request.server)
  if (routes === undefined) reported.set(request.server, routes = new Set())
  const route = routeName(request)
  if (!routes.has(route)) {
    routes.add(route)
    request.log.error(`${(error as Error & { code: string }).code}: ${error.message}`)
  }
}

/** Answers 503 and logs, once per route, what the host has to do. */
export async function failClosed (request: FastifyRequest, reply: FastifyReply, error = notRegistered(routeName(request))): Promise<FastifyReply> {
  reportOnce(request, error)
  return sendUnavailable(reply)
}

/** `GET /orders/:id`, as logs name a route (a not-found handler has no route URL: the request's). */
export function routeName (request: FastifyRequest): string {
  return `${request.method} ${request.routeOptions.url ?? request.url}`
}

function notRegistered (where: string): Error {
  return setupError('FST_PWAUTH_NOT_REGISTERED', where)
}

/**
 * The guard for host routes: `{ onRequest: authenticate }`. It exists before the plugin is registered and
 * finds the plugin through the route's context at request time, so the order of registration does not
 * matter; a route whose context has no registration (in it or an ancestor) answers 503, never passes.
 */
export const authenticate = function authenticate (request: FastifyRequest, reply: FastifyReply, done?: HookHandlerDoneFunction) {
  const state = guardStateOf(request.server)
  return state === undefined ? failClosed(request, reply) : state.check(request, reply, done)
} as Authenticate

/**
 * The guard for routes that serve everyone and more to a signed-in user: without an `Authorization`
 * header the request goes on with `request.account` null; with one, it is checked as `authenticate` does
 * (a token that fails is a 401, so a client learns its token went stale rather than seeing a signed-out page).
 */
export const optionalAuthenticate: Authenticate = async function optionalAuthenticate (request, reply) {
  const state = guardStateOf(request.server)
  if (state === undefined) return await failClosed(request, reply)
  if (request.headers.authorization === undefined) return
  return await state.check(request, reply)
}

/**
 * The guard as a strategy for @fastify/auth (`app.auth([authenticateStrategy, apiKey])`): it throws the
 * problem error (status, code, and the `WWW-Authenticate` header in `error.headers`) instead of answering,
 * so @fastify/auth can try the next strategy. Without the plugin in the route's context it throws 503.
 */
export async function authenticateStrategy (request: FastifyRequest, _reply?: FastifyReply): Promise<void> {
  const state = guardStateOf(request.server)
  if (state === undefined) {
    reportOnce(request, notRegistered(routeName(request)))
    throw Object.assign(requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 }), { headers: { 'retry-after': '1' } })
  }
  await state.verify(request)
}

function isFastifyInstance (value: unknown): value is FastifyInstance {
  return typeof value === 'object' && value !== null && typeof (value as FastifyInstance).hasDecorator === 'function' &&
    typeof (value as FastifyInstance).decorate === 'function'
}

// Fastify binds each route's hooks to the route's instance while it gets ready (after every plugin has
// loaded). Checking there turns a guarded route in a context without the plugin into a failed ready(),
// before any request; the request-time check above stays as the fallback.
const checkedAtReady = {
  value: function bind (this: Authenticate, thisArg: unknown, ...args: unknown[]) {
    if (isFastifyInstance(thisArg) && guardStateOf(thisArg) === undefined) {
      throw notRegistered(thisArg.prefix === '' ? 'a route without a prefix' : `a route under the prefix "${thisArg.prefix}"`)
    }
    return Function.prototype.bind.call(this, thisArg, ...args)
  }
}
Object.defineProperty(authenticate, 'bind', checkedAtReady)
Object.defineProperty(optionalAuthenticate, 'bind', checkedAtReady)

/** The account the guard put on the request, under whatever name this registration gave it; null if none. */
export function accountOf (request: FastifyRequest): PasswordAuthAccount | null {
  const state = guardStateOf(request.server)
  if (state === undefined) return null
  return ((request as unknown as Record<string, PasswordAuthAccount | null | undefined>)[state.accountKey]) ?? null
}

/** The session the guard put on the request; null if none. */
export function sessionOf (request: FastifyRequest): PasswordAuthSession | null {
  const state = guardStateOf(request.server)
  if (state === undefined) return null
  return ((request as unknown as Record<string, PasswordAuthSession | null | undefined>)[state.sessionKey]) ?? null
}

/**
 * A hook for after the guard: the session's last password proof must be at most `maxAgeSeconds` old, or
 * the request gets 401 FST_PWAUTH_REAUTHENTICATION_REQUIRED with an RFC 9470 challenge
 * (`error="insufficient_user_authentication", max_age=…`): the client asks for the password, calls
 * Reauthenticate, and tries again. `authenticated({ maxAuthAge }, handler)` adds it for you.
 */
export function requireRecentAuthentication (maxAgeSeconds: number): Authenticate {
  if (!Number.isSafeInteger(maxAgeSeconds) || maxAgeSeconds < 0) throw new TypeError('requireRecentAuthentication: maxAgeSeconds must be a whole number of seconds')
  return async function recentAuthentication (request, reply) {
    const state = guardStateOf(request.server)
    const session = sessionOf(request)
    if (state === undefined || session === null) return await failClosed(request, reply, setupError('FST_PWAUTH_GUARD_SKIPPED', routeName(request)))
    if (Date.now() - session.authenticatedAt > maxAgeSeconds * 1000) {
      return state.answerError(requestError('FST_PWAUTH_REAUTHENTICATION_REQUIRED', { maxAge: maxAgeSeconds }), request, reply)
    }
  }
}

/**
 * A hook for after the guard: the session must have proved a second factor (LoginMfa, or a code since), or
 * the request gets 401 FST_PWAUTH_MFA_REQUIRED. `authenticated({ requireMfa: true }, handler)` adds it for you.
 */
export const requireMfa: Authenticate = async function requireMfa (request, reply) {
  const state = guardStateOf(request.server)
  const session = sessionOf(request)
  if (state === undefined || session === null) return await failClosed(request, reply, setupError('FST_PWAUTH_GUARD_SKIPPED', routeName(request)))
  if (!session.mfa) return state.answerError(requestError('FST_PWAUTH_MFA_REQUIRED'), request, reply)
}

/**
 * The token check of one registration, as the hook `authenticate` runs: sets `request[accountKey]`; a
 * failed check is answered as problem+json here, whatever the host's error handler does.
 */
export function createGuardCheck (checkAccessToken: CheckAccessToken, answerError: ErrorHandler, keys: DecoratorKeys): GuardHook {
  return function check (request, reply, done) {
    let checked: CheckedToken | Promise<CheckedToken>
    try {
      checked = checkAccessToken(request)
    } catch (err) {
      // Sent here; the reply (a thenable) is what an async hook returning it gave Fastify to wait on.
      const answer = answerError(err, request, reply)
      return done === undefined ? Promise.resolve(answer) as Promise<FastifyReply | void> : answer
    }
    if (checked instanceof Promise) {
      return checked.then((token) => { setAuthenticated(request, token, keys) }, (err: unknown) => answerError(err, request, reply))
    }
    // With memory stores the check is done in this turn (GuardHook).
    setAuthenticated(request, checked, keys)
    if (done === undefined) return RESOLVED
    done()
    return undefined
  }
}

const RESOLVED = Promise.resolve()

interface DecoratorKeys { accountKey: string, sessionKey: string }

function setAuthenticated (request: FastifyRequest, { account, session }: CheckedToken, { accountKey, sessionKey }: DecoratorKeys): void {
  const decorated = request as unknown as Record<string, unknown>
  decorated[accountKey] = account
  decorated[sessionKey] = session
}

/** The token check of one registration, throwing: for `authenticateStrategy`. */
export function createGuardVerify (
  checkAccessToken: CheckAccessToken, asError: (error: unknown, request: FastifyRequest) => PasswordAuthError & { headers: Record<string, string> }, keys: DecoratorKeys
): GuardState['verify'] {
  return async function verify (request) {
    try {
      const checked = checkAccessToken(request)
      setAuthenticated(request, checked instanceof Promise ? await checked : checked, keys)
    } catch (err) {
      throw asError(err, request)
    }
  }
}
