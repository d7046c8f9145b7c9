import type { FastifyReply, FastifyRequest } from 'fastify'
import { requestError, type PasswordAuthError } from '../common/errors.js'
import type { PasswordResetRequiredRoute } from '../common/events.js'
import { normalizePassword } from '../password/hasher.js'
import type { PasswordAuthAccount } from '../stores/types.js'
import type { RouteContext } from './context.js'
import { sendResetLink } from './reset-link.js'

type Context = Pick<RouteContext, 'emit' | 'outbox' | 'mailLimit' | 'oneTimeTokens' | 'passwordReset'>

/**
 * The answer to a correct password that proves nothing any more: 403 PASSWORD_RESET_REQUIRED, and (with
 * resets on) a reset link to the account's address, sent after the answer as ForgotPassword sends it. Only
 * the mailbox can restore the account. The caller issues nothing.
 */
export function passwordResetRequired (context: Context, request: FastifyRequest, reply: FastifyReply,
  account: PasswordAuthAccount, route: PasswordResetRequiredRoute): PasswordAuthError {
  context.emit(request, { type: 'password.reset_required', route, reason: 'breached', accountId: account.id, email: account.email })
  const { passwordReset } = context
  if (passwordReset !== undefined) {
    context.outbox.afterResponse(reply, async () => { await sendResetLink(context, request, account, passwordReset.ttlMs) })
  }
  return requestError('FST_PWAUTH_PASSWORD_RESET_REQUIRED')
}

/**
 * Contract §20: a current password that has just verified and that the range service knows is refused
 * (throws passwordResetRequired's 403). Only ever called after the verification, so whoever lacks the
 * password gets the ordinary 401 in the ordinary time. A service that gives no answer lets it through
 * (its event is emitted): Login must not depend on it.
 */
export async function refuseBreachedPassword (context: Context & Pick<RouteContext, 'breachCheck'>, request: FastifyRequest, reply: FastifyReply,
  account: PasswordAuthAccount, password: string, route: PasswordResetRequiredRoute): Promise<void> {
  if (context.breachCheck === undefined) return
  if (await context.breachCheck.check(request, normalizePassword(password), 'current', account.id) !== 'breached') return
  throw passwordResetRequired(context, request, reply, account, route)
}
