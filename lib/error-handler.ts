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
 * The routes' error handler: every error becomes problem+json. Anything unexpected is logged and
 * answered 503, failing closed, never a 500 with internals.
 */
export function createErrorHandler (sendProblem: SendProblem) {
  return function errorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    if (isPasswordAuthError(error)) return sendProblem(reply, error)
    const known = fromFastifyError(error)
    if (known !== undefined) return sendProblem(reply, known)
    request.log.error({ err: error }, 'fastify-password-auth: unexpected error')
    return sendProblem(reply, requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 }))
  }
}
