import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { BODY_LIMIT } from './body-parsers.js'
import { isPasswordAuthError, requestError, type PasswordAuthError } from './errors.js'
import type { SendProblem } from './problem.js'

/** Fastify's own request errors, as the contract names them. */
function fromFastifyError (error: FastifyError): PasswordAuthError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': return requestError('FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE')
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return requestError('FST_PWAUTH_BODY_TOO_LARGE', undefined, BODY_LIMIT)
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
export function asRequestError (error: unknown, request: FastifyRequest): PasswordAuthError {
  if (isPasswordAuthError(error)) return error
  const known = fromFastifyError(error as FastifyError)
  if (known !== undefined) return known
  request.log.error({ err: error }, 'fastify-password-auth: unexpected error')
  return requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 })
}

/** The routes' error handler: every error becomes problem+json. */
export function createErrorHandler (sendProblem: SendProblem) {
  return function errorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return sendProblem(reply, asRequestError(error, request))
  }
}
