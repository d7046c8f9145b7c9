import type { FastifyReply, FastifyRequest } from 'fastify'
import { requestError, type PasswordAuthError } from '../common/errors.js'
import type { MfaRoute, PasswordRoute, ResetRequiredReason } from '../common/events.js'
import type { ConfirmCheck, SecondFactorCheck } from '../mfa/second-factor.js'
import type { PasswordCheckResult } from '../password/credential-check.js'
import type { PasswordAuthAccount } from '../stores/types.js'
import type { RouteContext } from './context.js'

/** A password check that did not pass (a verified password whose reset is required is refuseResetRequired's). */
export type RefusedPassword = Exclude<PasswordCheckResult, { outcome: 'accepted' | 'reset_required' }>

/** A second-factor code that was not accepted (`off` where the route needs a code all the same). */
export type RefusedCode = Exclude<SecondFactorCheck | ConfirmCheck, { outcome: 'accepted' | 'no_setup' }>

/** A refused passkey response: the one 401, whatever the reason (400 at registration). */
export const refusePasskey = (): Error => requestError('FST_PWAUTH_PASSKEY_INVALID')

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
 * A second-factor code's answer: its event, then 429 with Retry-After while the code counter is blocked,
 * else 401 MFA_CODE_INVALID. A missing code is no failure (a client asks for the code next): `mfa.code_required`.
 * `afterPassword`: the request proved the password first (Login's challenge, ChangePassword, Reauthenticate,
 * Disable), so a wrong code says someone has it: the owner hears it once a day (mfa_code_failed, after the answer).
 */
export function refuseCode ({ emit, outbox, mailLimit }: Pick<RouteContext, 'emit' | 'outbox' | 'mailLimit'>, request: FastifyRequest, reply: FastifyReply,
  route: MfaRoute, account: PasswordAuthAccount, check: RefusedCode, { afterPassword = false } = {}): PasswordAuthError {
  const accountId = account.id
  switch (check.outcome) {
    case 'missing':
      emit(request, { type: 'mfa.code_required', route, accountId })
      return requestError('FST_PWAUTH_MFA_CODE_INVALID')
    case 'throttled':
      emit(request, { type: 'mfa.failed', route, reason: 'throttled', accountId })
      return requestError('FST_PWAUTH_TOO_MANY_ATTEMPTS', { retryAfter: check.retryAfter })
  }
  emit(request, { type: 'mfa.failed', route, reason: 'invalid', accountId })
  if (afterPassword && check.outcome !== 'off') {
    outbox.afterResponse(reply, async () => {
      if (await mailLimit.take(request, account.email, 'mfa_code_failed')) outbox.send(request, { type: 'mfa_code_failed', to: account.email, accountId })
    })
  }
  return requestError('FST_PWAUTH_MFA_CODE_INVALID')
}

/**
 * The answer to a correct password that may not be used (contract §20, §22): the account's reset is required
 * (`admin`: fastify.passwordAuth.admin.requirePasswordReset marked it) or the password is known to be breached
 * (`breached`). Only ever after the password verified, so anyone without it still gets the 401. Nothing is issued:
 * 403 PASSWORD_RESET_REQUIRED, and after the answer a password_reset link, as ForgotPassword would send it (within
 * the address's budget; nothing while resets are off). The one place this outcome is built: every route that
 * verifies the current password calls it.
 */
export function refuseResetRequired ({ emit, outbox, resetLinks }: Pick<RouteContext, 'emit' | 'outbox' | 'resetLinks'>, request: FastifyRequest, reply: FastifyReply,
  route: PasswordRoute, account: PasswordAuthAccount, reason: ResetRequiredReason = 'admin'): PasswordAuthError {
  emit(request, { type: 'password.reset_required', route, reason, accountId: account.id, email: account.email })
  if (resetLinks !== undefined) outbox.afterResponse(reply, async () => { await resetLinks.send({ request }, account) })
  return requestError('FST_PWAUTH_PASSWORD_RESET_REQUIRED')
}
