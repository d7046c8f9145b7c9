import type { FastifyRequest } from 'fastify'
import { requestError, type PasswordAuthError } from '../common/errors.js'
import type { EmitEvent, MfaRoute } from '../common/events.js'
import type { ConfirmCheck, SecondFactorCheck } from '../mfa/second-factor.js'
import type { PasswordCheckResult } from '../password/credential-check.js'

/** A password check that did not pass. */
export type RefusedPassword = Exclude<PasswordCheckResult, { outcome: 'accepted' }>

/** A second-factor code that was not accepted (`off` where the route needs a code all the same). */
export type RefusedCode = Exclude<SecondFactorCheck | ConfirmCheck, { outcome: 'accepted' | 'no_setup' }>

/**
 * A password check's answer once the route has reported it: 429 with Retry-After while the counter is
 * blocked, else the one 401 of every failure (unknown address, wrong password, inactive account alike).
 */
export function refusePassword (check: RefusedPassword): PasswordAuthError {
  return check.outcome === 'throttled'
    ? requestError('FST_PWAUTH_TOO_MANY_ATTEMPTS', { retryAfter: check.retryAfter })
    : requestError('FST_PWAUTH_INVALID_CREDENTIALS')
}

/**
 * A second-factor code's answer: the `mfa.failed` event of `route`, then 429 with Retry-After while the
 * account's code counter is blocked, else 401 MFA_CODE_INVALID.
 */
export function refuseCode (emit: EmitEvent, request: FastifyRequest, route: MfaRoute, accountId: string, check: RefusedCode): PasswordAuthError {
  if (check.outcome === 'throttled') {
    emit(request, { type: 'mfa.failed', route, reason: 'throttled', accountId })
    return requestError('FST_PWAUTH_TOO_MANY_ATTEMPTS', { retryAfter: check.retryAfter })
  }
  emit(request, { type: 'mfa.failed', route, reason: 'invalid', accountId })
  return requestError('FST_PWAUTH_MFA_CODE_INVALID')
}
