import type { Problem, ProblemCode } from './types.js'

/** What went wrong on the client's side of the wire: no answer at all, no answer in time, or an answer that is not the plugin's. */
export type ClientFailure = 'NETWORK_ERROR' | 'TIMEOUT' | 'UNEXPECTED_ANSWER' | 'PASSKEY_UNAVAILABLE'

/**
 * Every failed call of the client: `code` is the plugin's problem code (`status` its HTTP status, `problem` the
 * whole body), or a ClientFailure with `status` 0 (no answer) or the status of an answer that was not the plugin's.
 */
export class AuthError extends Error {
  readonly code: ProblemCode | ClientFailure
  readonly status: number
  readonly problem: Problem | undefined
  /** Seconds, from Retry-After (429, 503). */
  readonly retryAfter: number | undefined

  constructor (code: ProblemCode | ClientFailure, status: number, message: string, { problem, retryAfter, cause }: { problem?: Problem, retryAfter?: number, cause?: unknown } = {}) {
    super(message, { cause })
    this.name = 'AuthError'
    this.code = code
    this.status = status
    this.problem = problem
    this.retryAfter = retryAfter
  }
}

/** The AuthError of an answer that is not a success: its problem+json, or UNEXPECTED_ANSWER. */
export async function answerError (response: Response): Promise<AuthError> {
  const retry = Number(response.headers.get('retry-after'))
  const retryAfter = Number.isFinite(retry) && retry > 0 ? retry : undefined
  const problem = await problemOf(response)
  if (problem === undefined) return new AuthError('UNEXPECTED_ANSWER', response.status, `Unexpected answer ${response.status} from ${response.url}`, { retryAfter })
  return new AuthError(problem.code, response.status, problem.detail, { problem, retryAfter })
}

/** The problem+json body of `response`, read from a copy (the caller may still read the body), or undefined. */
export async function problemOf (response: Response): Promise<Problem | undefined> {
  if (!(response.headers.get('content-type') ?? '').startsWith('application/problem+json')) return undefined
  try {
    const body = await response.clone().json() as Partial<Problem> | null
    return typeof body?.code === 'string' && body.code.startsWith('FST_PWAUTH_') ? body as Problem : undefined
  } catch {
    return undefined
  }
}
