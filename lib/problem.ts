import type { FastifyReply } from 'fastify'
import { titles, type FieldError, type PasswordAuthError, type RequestErrorCode, type WeakPasswordReason } from './errors.js'

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

export function problemType (code: RequestErrorCode): string {
  return 'urn:fastify-password-auth:problem:' + code.slice('FST_PWAUTH_'.length).toLowerCase().replaceAll('_', '-')
}

export function toProblem (error: PasswordAuthError): Problem {
  const problem: Problem = {
    type: problemType(error.code),
    title: titles[error.code],
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
  const challenge = `Bearer realm="${realm}"`
  const invalidTokenChallenge = `${challenge}, error="invalid_token"`

  return function sendProblem (reply, error) {
    reply.code(error.statusCode)
    reply.header('cache-control', 'no-store')
    if (error.code === 'FST_PWAUTH_TOKEN_INVALID') {
      reply.header('www-authenticate', invalidTokenChallenge)
    } else if (error.statusCode === 401) {
      reply.header('www-authenticate', challenge)
    }
    if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter))
    reply.type('application/problem+json')
    return reply.send(JSON.stringify(toProblem(error)))
  }
}
