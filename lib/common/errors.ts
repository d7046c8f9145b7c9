import createError, { type FastifyErrorConstructor } from '@fastify/error'
import type { FastifyError, FastifyRequest } from 'fastify'

export const WEAK_PASSWORD_REASONS = Object.freeze(['too_short', 'too_long', 'same_as_current', 'contains_email', 'common', 'rejected', 'breached'] as const)
export type WeakPasswordReason = typeof WEAK_PASSWORD_REASONS[number]

/** One failed input rule, pointing into the request body (RFC 6901 JSON pointer). */
export interface FieldError {
  pointer: string
  detail: string
}

/**
 * The WWW-Authenticate challenge a 401 carries: a plain one, one saying the token was invalid, or one
 * asking for a more recent authentication (RFC 9470, with `max_age`).
 */
export type Challenge = 'bearer' | 'invalid_token' | 'insufficient_user_authentication'

interface RequestErrorSpec {
  status: number
  /** RFC 9457 `title`: short and fixed. */
  title: string
  /** RFC 9457 `detail`; `%s` placeholders take the arguments of requestError(). */
  detail: string
  challenge?: Challenge
  /** Answered with `Retry-After` (seconds). */
  retryAfter?: true
}

/** Every error a request can get, keyed by its code. The only place that knows them. */
const REQUEST_ERRORS = {
  FST_PWAUTH_VALIDATION: { status: 400, title: 'Invalid request body', detail: 'The request body does not satisfy the input rules.' },
  FST_PWAUTH_MALFORMED_BODY: { status: 400, title: 'Malformed request body', detail: 'The request body is empty, is not well-formed UTF-8, or is not valid JSON.' },
  FST_PWAUTH_PASSWORD_MISMATCH: { status: 400, title: 'Password confirmation does not match', detail: 'confirmNewPassword does not equal newPassword.' },
  FST_PWAUTH_VERIFY_TOKEN_INVALID: {
    status: 400, title: 'Verification link not valid', detail: 'This verification link is not valid any more: it was used or expired, or the address has an account. Register again or sign in.'
  },
  FST_PWAUTH_RESET_TOKEN_INVALID: {
    status: 400, title: 'Reset link not valid', detail: 'This password reset link is not valid any more: it was used, replaced or expired. Ask for a new one.'
  },
  FST_PWAUTH_WEAK_PASSWORD: { status: 400, title: 'Password too weak', detail: 'The new password does not satisfy the password policy.' },
  FST_PWAUTH_INVALID_CREDENTIALS: {
    status: 401, title: 'Invalid credentials', detail: 'The e-mail address or password is incorrect, or the account cannot sign in.', challenge: 'bearer'
  },
  FST_PWAUTH_TOKEN_MISSING: {
    status: 401, title: 'Access token missing', detail: 'This request needs an access token in the header "Authorization: Bearer <token>".', challenge: 'bearer'
  },
  FST_PWAUTH_TOKEN_INVALID: {
    status: 401, title: 'Invalid access token', detail: 'The access token is invalid, expired or revoked.', challenge: 'invalid_token'
  },
  FST_PWAUTH_REFRESH_TOKEN_INVALID: {
    status: 401, title: 'Invalid refresh token', detail: 'The refresh token is invalid, expired or no longer in use. Log in again.', challenge: 'invalid_token'
  },
  FST_PWAUTH_REAUTHENTICATION_REQUIRED: {
    status: 401,
    title: 'Recent authentication required',
    detail: 'This action needs a recent password check: POST /Reauthenticate with the password, then try again.',
    challenge: 'insufficient_user_authentication'
  },
  FST_PWAUTH_MFA_REQUIRED: {
    status: 401,
    title: 'Second factor required',
    detail: 'This action needs a session that proved a second factor: turn two factors on, then log in with a code.',
    challenge: 'insufficient_user_authentication'
  },
  FST_PWAUTH_MFA_CODE_INVALID: {
    status: 401, title: 'Invalid code', detail: 'The code is not valid, or it was already used. Enter a new code from your authenticator app, or a recovery code.', challenge: 'bearer'
  },
  // `%s`: which state it is (already on, no set-up waiting, not on).
  FST_PWAUTH_MFA_STATE: { status: 409, title: 'Two factors not in that state', detail: '%s' },
  FST_PWAUTH_SESSION_NOT_FOUND: { status: 404, title: 'Session not found', detail: 'No live session (or trusted device) of yours has this id.' },
  FST_PWAUTH_BODY_TOO_LARGE: { status: 413, title: 'Request body too large', detail: 'The request body is larger than %s bytes.' },
  FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type', detail: 'The request body must be sent as application/json in UTF-8.' },
  FST_PWAUTH_TOO_MANY_ATTEMPTS: { status: 429, title: 'Too many attempts', detail: 'Too many attempts. Try again later.', retryAfter: true },
  // Answered by passwordAuthClientErrorHandler, before Fastify sees a request.
  FST_PWAUTH_MALFORMED_REQUEST: { status: 400, title: 'Malformed request', detail: 'The request is not well-formed HTTP/1.1.' },
  FST_PWAUTH_REQUEST_TIMEOUT: { status: 408, title: 'Request timeout', detail: 'The request did not arrive in time.' },
  FST_PWAUTH_HEADERS_TOO_LARGE: { status: 431, title: 'Request header fields too large', detail: 'The request headers are larger than this server accepts.' },
  FST_PWAUTH_UNAVAILABLE: {
    status: 503, title: 'Service unavailable', detail: 'The service is temporarily unable to handle the request. Try again later.', retryAfter: true
  },
  FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID: {
    status: 400, title: 'E-mail change link not valid', detail: 'This link is not valid any more: it was used, replaced or expired, the account changed since, or the address has an account.'
  },
  FST_PWAUTH_PASSWORD_RESET_REQUIRED: {
    status: 403, title: 'Password reset required', detail: 'This password may not be used any more. A link to set a new one is on its way to the account\'s address.'
  },
  // `%s`: the host's own detail (its beforeDelete's answer).
  FST_PWAUTH_DELETE_REFUSED: { status: 409, title: 'Account cannot be deleted', detail: '%s' },
  FST_PWAUTH_PASSKEY_INVALID: {
    status: 401, title: 'Passkey not accepted', detail: 'The passkey response was not accepted. Ask for new options and try again.', challenge: 'bearer'
  },
  FST_PWAUTH_PASSKEY_NOT_FOUND: { status: 404, title: 'Passkey not found', detail: 'No passkey of yours has this id.' },
  FST_PWAUTH_PASSKEY_LIMIT: { status: 409, title: 'Too many passkeys', detail: 'The account already has as many passkeys as allowed: remove one first.' }
} as const satisfies Record<string, RequestErrorSpec>

export type RequestErrorCode = keyof typeof REQUEST_ERRORS

/** Mistakes in how the host sets the plugin up, thrown at registration or start-up (500 / TypeError). */
const SETUP_ERRORS = {
  FST_PWAUTH_INVALID_OPTION: 'fastify-password-auth: %s',
  FST_PWAUTH_ALREADY_REGISTERED: 'fastify-password-auth is already registered in this context (prefix "%s") or one of its ancestors. ' +
    'Register it once; for a second, independent set of routes register it inside another plugin, beside the first',
  FST_PWAUTH_NAME_TAKEN: 'fastify-password-auth: %s is already decorated (%s). %s',
  FST_PWAUTH_NOT_REGISTERED: 'fastify-password-auth: %s uses the authenticate guard, but the plugin is not registered in its context or an ' +
    'ancestor, so it could only answer 503. Register the plugin there or in an ancestor: await app.register(passwordAuth, options)',
  FST_PWAUTH_GUARD_SKIPPED: 'fastify-password-auth: %s reached a handler made with authenticated() without an account: the authenticate guard ' +
    'did not run before it. Keep the onRequest hook that authenticated() sets in the route options'
} as const

export type SetupErrorCode = keyof typeof SETUP_ERRORS
export type ErrorCode = RequestErrorCode | SetupErrorCode

// Request errors are thrown on hot paths (every failed login), so they skip the stack trace.
const NO_STACK = false

/** Every error class of the plugin, keyed by its code, for matching on `code`. */
export const errors = {
  ...Object.fromEntries(Object.entries(REQUEST_ERRORS).map(([code, { detail, status }]) =>
    [code, createError(code, detail, status, Error, NO_STACK)])) as Record<RequestErrorCode, FastifyErrorConstructor>,
  ...Object.fromEntries(Object.entries(SETUP_ERRORS).map(([code, message]) =>
    [code, createError(code, message, 500, TypeError)])) as Record<SetupErrorCode, FastifyErrorConstructor>
} satisfies Record<ErrorCode, FastifyErrorConstructor>

/** A request error with the extra members some problems carry. */
export interface PasswordAuthError extends Error {
  code: RequestErrorCode
  statusCode: number
  errors?: FieldError[]
  reasons?: WeakPasswordReason[]
  /** Seconds, sent as `Retry-After` (429 and 503). */
  retryAfter?: number
  /** Seconds, the `max_age` of an insufficient_user_authentication challenge. */
  maxAge?: number
}

export function requestError (code: RequestErrorCode, extras?: Partial<Pick<PasswordAuthError, 'errors' | 'reasons' | 'retryAfter' | 'maxAge'>>, ...args: unknown[]): PasswordAuthError {
  const error = new errors[code](...args) as PasswordAuthError
  if (extras !== undefined) Object.assign(error, extras)
  return error
}

export function invalidOption (message: string): Error {
  return new errors.FST_PWAUTH_INVALID_OPTION(message)
}

export function setupError (code: Exclude<SetupErrorCode, 'FST_PWAUTH_INVALID_OPTION'>, ...args: string[]): Error {
  return new errors[code](...args)
}

export function titleOf (code: RequestErrorCode): string {
  return REQUEST_ERRORS[code].title
}

export function challengeOf (code: RequestErrorCode): Challenge | undefined {
  return (REQUEST_ERRORS[code] as RequestErrorSpec).challenge
}

export function statusOf (code: RequestErrorCode): number {
  return REQUEST_ERRORS[code].status
}

export function hasRetryAfter (code: RequestErrorCode): boolean {
  return (REQUEST_ERRORS[code] as RequestErrorSpec).retryAfter === true
}

/** The RFC 9457 `type` of a code: `urn:fastify-password-auth:problem:invalid-credentials`. */
export function problemType (code: RequestErrorCode): string {
  return 'urn:fastify-password-auth:problem:' + code.slice('FST_PWAUTH_'.length).toLowerCase().replaceAll('_', '-')
}

export const REQUEST_ERROR_CODES = Object.freeze(Object.keys(REQUEST_ERRORS) as RequestErrorCode[])

function isPasswordAuthError (error: unknown): error is PasswordAuthError {
  const code = (error as { code?: unknown } | null)?.code
  return error instanceof Error && typeof code === 'string' && Object.hasOwn(REQUEST_ERRORS, code)
}

/** Fastify's own request errors, as the contract names them. */
function fromFastifyError (error: FastifyError, bodyLimit: number): PasswordAuthError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': return requestError('FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE')
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return requestError('FST_PWAUTH_BODY_TOO_LARGE', undefined, bodyLimit)
  }
  // Every other 4xx Fastify raises before the handler is about an unreadable body.
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return requestError('FST_PWAUTH_MALFORMED_BODY')
  }
  return undefined
}

/**
 * Any error as one of the contract's. Anything unexpected is logged and becomes 503: authentication
 * fails closed, and never answers a 500 with internals.
 */
export function asRequestError (error: unknown, request: FastifyRequest, bodyLimit: number): PasswordAuthError {
  if (isPasswordAuthError(error)) return error
  const known = fromFastifyError(error as FastifyError, bodyLimit)
  if (known !== undefined) return known
  request.log.error({ err: error }, 'fastify-password-auth: unexpected error')
  return requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 })
}
