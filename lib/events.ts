import type { FastifyRequest } from 'fastify'

export type LoginFailureReason = 'unknown_account' | 'wrong_password' | 'inactive_account'

export type ChangeFailureReason =
  | LoginFailureReason
  | 'throttled'
  /** Another change (or a rehash) replaced the password between verification and update. */
  | 'conflict'

/** What the plugin reports. Never carries a password, a hash or a token. */
export type AuthEventDetails =
  | { type: 'login.succeeded', accountId: string, email: string }
  | { type: 'login.failed', reason: LoginFailureReason, accountId?: string, email: string }
  | { type: 'login.throttled', email: string, retryAfter: number }
  | { type: 'password.changed', accountId: string, email: string }
  | { type: 'password.change_failed', reason: ChangeFailureReason, accountId?: string, email: string }
  | { type: 'logout', accountId: string, tokenId: string }

export type AuthEvent = AuthEventDetails & {
  /** Epoch milliseconds. */
  time: number
  requestId: string
  ip: string
}

export type AuthEventType = AuthEvent['type']

export type AuthEventHandler = (event: AuthEvent) => void | Promise<void>

export type EmitEvent = (request: FastifyRequest, details: AuthEventDetails) => void

const LEVELS: Record<AuthEventType, 'info' | 'warn'> = {
  'login.succeeded': 'info',
  'login.failed': 'info',
  'login.throttled': 'warn',
  'password.changed': 'info',
  'password.change_failed': 'info',
  logout: 'info'
}

/**
 * Builds the reporter: every event goes to the request logger and to the host's handler, whose errors
 * (thrown or rejected) are logged and never change the response.
 */
export function createEventEmitter (handler: AuthEventHandler | undefined): EmitEvent {
  return function emit (request, details) {
    const event: AuthEvent = { ...details, time: Date.now(), requestId: request.id, ip: request.ip }
    request.log[LEVELS[event.type]]({ authEvent: event }, `fastify-password-auth: ${event.type}`)
    if (handler === undefined) return
    try {
      const result = handler(event)
      if (result !== undefined && typeof result.then === 'function') {
        result.then(undefined, (err: unknown) => { logHandlerError(request, err) })
      }
    } catch (err) {
      logHandlerError(request, err)
    }
  }
}

function logHandlerError (request: FastifyRequest, err: unknown): void {
  request.log.error({ err }, 'fastify-password-auth: the onEvent handler failed')
}
