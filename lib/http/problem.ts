import type { FastifyReply, FastifyRequest } from 'fastify'
import { BODY_LIMIT } from './body-parsers.js'
import {
  asRequestError, challengeOf, requestError, problemType, titleOf, type FieldError, type PasswordAuthError, type RequestErrorCode, type WeakPasswordReason
} from '../common/errors.js'

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
  const headersOf = createProblemHeaders(realm)
  return function sendProblem (reply, error) {
    reply.code(error.statusCode)
    reply.headers(headersOf(error))
    reply.type('application/problem+json')
    return reply.send(JSON.stringify(toProblem(error)))
  }
}

/** The contract's headers of an error's answer: no-store, the WWW-Authenticate challenge, Retry-After. */
export function createProblemHeaders (realm: string): (error: PasswordAuthError) => Record<string, string> {
  const challenges = {
    bearer: `Bearer realm="${realm}"`,
    invalid_token: `Bearer realm="${realm}", error="invalid_token"`,
    insufficient_user_authentication: `Bearer realm="${realm}", error="insufficient_user_authentication"`
  }
  return function headersOf (error) {
    const headers: Record<string, string> = { 'cache-control': 'no-store' }
    const challenge = challengeOf(error.code)
    // A code answered with 400 in one place (a refused passkey registration) carries no challenge there.
    if (challenge !== undefined && error.statusCode === 401) headers['www-authenticate'] = challenges[challenge] + (error.maxAge === undefined ? '' : `, max_age=${error.maxAge}`)
    if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter)
    return headers
  }
}

export type ErrorHandler = (error: unknown, request: FastifyRequest, reply: FastifyReply) => FastifyReply

/** Every error as problem+json: the routes' error handler, and the guard's answer to a failed check. */
export function createErrorHandler (sendProblem: SendProblem): ErrorHandler {
  return function errorHandler (error, request, reply) {
    return sendProblem(reply, asRequestError(error, request, BODY_LIMIT))
  }
}

// A 503 carries no challenge, so it needs no realm: answered the same by every registration, and where there is none.
const sendRealmless = createProblemSender('')

/** 503 UNAVAILABLE with Retry-After: 1. */
export function sendUnavailable (reply: FastifyReply): FastifyReply {
  return sendRealmless(reply, requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 }))
}
