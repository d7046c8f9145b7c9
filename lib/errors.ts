import createError from '@fastify/error'

export type WeakPasswordReason = 'too_short' | 'too_long' | 'same_as_current' | 'contains_email' | 'rejected'

/** One failed input rule, pointing into the request body (RFC 6901 JSON pointer). */
export interface FieldError {
  pointer: string
  detail: string
}

// Request errors are thrown on hot paths (every failed login), so they skip the stack trace.
const NO_STACK = false

/** Every error the plugin answers with, keyed by its code. */
export const errors = {
  FST_PWAUTH_VALIDATION: createError('FST_PWAUTH_VALIDATION', 'The request body does not satisfy the input rules.', 400, Error, NO_STACK),
  FST_PWAUTH_MALFORMED_BODY: createError('FST_PWAUTH_MALFORMED_BODY', 'The request body is empty or is not valid JSON.', 400, Error, NO_STACK),
  FST_PWAUTH_PASSWORD_MISMATCH: createError('FST_PWAUTH_PASSWORD_MISMATCH', 'confirmNewPassword does not equal newPassword.', 400, Error, NO_STACK),
  FST_PWAUTH_WEAK_PASSWORD: createError('FST_PWAUTH_WEAK_PASSWORD', 'The new password does not satisfy the password policy.', 400, Error, NO_STACK),
  FST_PWAUTH_INVALID_CREDENTIALS: createError('FST_PWAUTH_INVALID_CREDENTIALS', 'The e-mail address or password is incorrect, or the account cannot sign in.', 401, Error, NO_STACK),
  FST_PWAUTH_TOKEN_MISSING: createError('FST_PWAUTH_TOKEN_MISSING', 'This request needs an access token in the header "Authorization: Bearer <token>".', 401, Error, NO_STACK),
  FST_PWAUTH_TOKEN_INVALID: createError('FST_PWAUTH_TOKEN_INVALID', 'The access token is invalid, expired or revoked.', 401, Error, NO_STACK),
  FST_PWAUTH_BODY_TOO_LARGE: createError('FST_PWAUTH_BODY_TOO_LARGE', 'The request body is larger than %s bytes.', 413, Error, NO_STACK),
  FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE: createError('FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE', 'The request body must be sent as application/json.', 415, Error, NO_STACK),
  FST_PWAUTH_TOO_MANY_ATTEMPTS: createError('FST_PWAUTH_TOO_MANY_ATTEMPTS', 'Too many attempts. Try again later.', 429, Error, NO_STACK),
  FST_PWAUTH_UNAVAILABLE: createError('FST_PWAUTH_UNAVAILABLE', 'The service is temporarily unable to handle the request. Try again later.', 503, Error, NO_STACK),
  /** A configuration mistake, thrown at registration. */
  FST_PWAUTH_INVALID_OPTION: createError('FST_PWAUTH_INVALID_OPTION', 'fastify-password-auth: %s', 500, TypeError)
} as const

export type ErrorCode = keyof typeof errors
export type RequestErrorCode = Exclude<ErrorCode, 'FST_PWAUTH_INVALID_OPTION'>

/** Short, fixed summaries (RFC 9457 `title`), one per code. */
export const titles: Record<RequestErrorCode, string> = {
  FST_PWAUTH_VALIDATION: 'Invalid request body',
  FST_PWAUTH_MALFORMED_BODY: 'Malformed request body',
  FST_PWAUTH_PASSWORD_MISMATCH: 'Password confirmation does not match',
  FST_PWAUTH_WEAK_PASSWORD: 'Password too weak',
  FST_PWAUTH_INVALID_CREDENTIALS: 'Invalid credentials',
  FST_PWAUTH_TOKEN_MISSING: 'Access token missing',
  FST_PWAUTH_TOKEN_INVALID: 'Invalid access token',
  FST_PWAUTH_BODY_TOO_LARGE: 'Request body too large',
  FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE: 'Unsupported media type',
  FST_PWAUTH_TOO_MANY_ATTEMPTS: 'Too many attempts',
  FST_PWAUTH_UNAVAILABLE: 'Service unavailable'
}

/** A request error with the extra members some problems carry. */
export interface PasswordAuthError extends Error {
  code: RequestErrorCode
  statusCode: number
  errors?: FieldError[]
  reasons?: WeakPasswordReason[]
  /** Seconds, sent as `Retry-After` (429 and 503). */
  retryAfter?: number
}

export function requestError (code: RequestErrorCode, extras?: Partial<Pick<PasswordAuthError, 'errors' | 'reasons' | 'retryAfter'>>, ...args: unknown[]): PasswordAuthError {
  const error = new errors[code](...args) as PasswordAuthError
  if (extras !== undefined) Object.assign(error, extras)
  return error
}

export function isPasswordAuthError (error: unknown): error is PasswordAuthError {
  const code = (error as { code?: unknown } | null)?.code
  return error instanceof Error && typeof code === 'string' && Object.hasOwn(titles, code)
}

export function invalidOption (message: string): Error {
  return new errors.FST_PWAUTH_INVALID_OPTION(message)
}
