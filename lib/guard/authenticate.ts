import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { setupError } from '../errors.js'
import { sendUnavailable, type ErrorHandler } from '../http/problem.js'
import type { PasswordAuthAccount } from '../stores/types.js'
import type { CheckAccessToken } from './token-check.js'

/** The guard for host routes: `{ onRequest: authenticate }`. Sets `request.account`. */
export type Authenticate = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | void>

/** What the plugin leaves in the context it is registered in, for the guard to find. */
export interface GuardState {
  /** The token check of this registration; sets the account on `request[accountKey]`. */
  check: Authenticate
  accountKey: string
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

/** Answers 503 and logs, once per route, what the host has to do. */
export async function failClosed (request: FastifyRequest, reply: FastifyReply, error = notRegistered(routeName(request))): Promise<FastifyReply> {
  let routes = reported.get(request.server)
  if (routes === undefined) reported.set(request.server, routes = new Set())
  const route = routeName(request)
  if (!routes.has(route)) {
    routes.add(route)
    request.log.error(`${(error as Error & { code: string }).code}: ${error.message}`)
  }
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
export const authenticate: Authenticate = function authenticate (request, reply) {
  const state = guardStateOf(request.server)
  return state === undefined ? failClosed(request, reply) : state.check(request, reply)
}

function isFastifyInstance (value: unknown): value is FastifyInstance {
  return typeof value === 'object' && value !== null && typeof (value as FastifyInstance).hasDecorator === 'function' &&
    typeof (value as FastifyInstance).decorate === 'function'
}

// Fastify binds each route's hooks to the route's instance while it gets ready (after every plugin has
// loaded). Checking there turns a guarded route in a context without the plugin into a failed ready(),
// before any request; the request-time check above stays as the fallback.
Object.defineProperty(authenticate, 'bind', {
  value: function bind (this: Authenticate, thisArg: unknown, ...args: unknown[]) {
    if (isFastifyInstance(thisArg) && guardStateOf(thisArg) === undefined) {
      throw notRegistered(thisArg.prefix === '' ? 'a route without a prefix' : `a route under the prefix "${thisArg.prefix}"`)
    }
    return Function.prototype.bind.call(this, thisArg, ...args)
  }
})

/** The account the guard put on the request, under whatever name this registration gave it; null if none. */
export function accountOf (request: FastifyRequest): PasswordAuthAccount | null {
  const state = guardStateOf(request.server)
  if (state === undefined) return null
  return ((request as unknown as Record<string, PasswordAuthAccount | null | undefined>)[state.accountKey]) ?? null
}

/**
 * The token check of one registration, as the hook `authenticate` runs: sets `request[accountKey]`; a
 * failed check is answered as problem+json here, whatever the host's error handler does.
 */
export function createGuardCheck (checkAccessToken: CheckAccessToken, answerError: ErrorHandler, accountKey: string): Authenticate {
  return async function check (request, reply) {
    try {
      (request as unknown as Record<string, unknown>)[accountKey] = (await checkAccessToken(request)).account
    } catch (err) {
      return answerError(err, request, reply)
    }
  }
}
