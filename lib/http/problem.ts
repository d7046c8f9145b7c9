import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { BODY_LIMIT } from './body-parsers.js'
import {
  asRequestError, challengeOf, problemType, titleOf, type FieldError, type PasswordAuthError, type RequestErrorCode, type WeakPasswordReason
} from '../errors.js'

/** RFC 9457 problem details, as every error of the plugin is answered. */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code: RequestErrorCode
  errors?: FieldError[]
  reasons?: WeakPasswordReason[]
}

export type SendProblem = (reply: FastifyReply, error: PasswordAuthError) => FastifyReply

export function toProblem (error: PasswordAuthError): Problem {
  const problem: Problem = {
    type: problemType(error.code),
    title: titleOf(error.code),
    status: error.statusCode,
    detail: error.message,
    code: error.code
  }
  if (error.errors !== undefined) problem.errors = error.errors
  if (error.reasons !== undefined) problem.reasons = error.reasons
  return problem
}

/**
 * Builds the function that answers an error as problem+json with the contract's headers.
 * The body is serialised here so a host route's response schema or serializer cannot reshape it.
 */
export function createProblemSender (realm: string): SendProblem {
  const challenges = { bearer: `Bearer realm="${realm}"`, invalid_token: `Bearer realm="${realm}", error="invalid_token"` }

  return function sendProblem (reply, error) {
    reply.code(error.statusCode)
    reply.header('cache-control', 'no-store')
    const challenge = challengeOf(error.code)
    if (challenge !== undefined) reply.header('www-authenticate', challenges[challenge])
    if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter))
    reply.type('application/problem+json')
    return reply.send(JSON.stringify(toProblem(error)))
  }
}

/** The routes' error handler: every error becomes problem+json. */
export function createErrorHandler (sendProblem: SendProblem) {
  return function errorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return sendProblem(reply, asRequestError(error, request, BODY_LIMIT))
  }
}
