import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PasswordAuthAccount } from '../../stores/types.js'
import type { KnownDevice } from '../../throttle/known-devices.js'
import type { RouteContext } from '../context.js'
import { refusePassword, refuseResetRequired, type RefusedPassword } from '../refusals.js'

const OTHER_ACCOUNT: RefusedPassword = { outcome: 'rejected', reason: 'unknown_account', account: null }

/**
 * Where a signed-in session proves its password again: Reauthenticate, or Confirm, Disable, RecoveryCodes, ChangeEmail,
 * DeleteAccount and Passkeys, whose password is their recent authentication.
 */
export type SessionPasswordRoute = 'Reauthenticate' | 'Mfa/Confirm' | 'Mfa/Disable' | 'Mfa/RecoveryCodes' | 'ChangeEmail' | 'DeleteAccount' | 'Passkeys'

/**
 * The password of the token's own account, proved again: Login's check exactly (the per-e-mail throttle or a
 * known device's counter, one argon2 verification, one 401), reported as `session.reauthentication_failed`
 * and thrown as refusePassword's answer. A missing password is a wrong one; a correct one that may not be used
 * (an admin's reset mark, or breached) is refuseResetRequired's 403.
 */
export async function proveSessionPassword (context: Pick<RouteContext, 'checkPassword' | 'emit' | 'outbox' | 'resetLinks'>, request: FastifyRequest, reply: FastifyReply,
  { account, sessionId, password, device, route }: { account: PasswordAuthAccount, sessionId: string, password: string | undefined, device: KnownDevice | null, route: SessionPasswordRoute }
): Promise<void> {
  const { checkPassword, emit } = context
  const checked = await checkPassword(request, account.email, password ?? '', device)
  // The e-mail could name another account only if the store changed under us: that is a failure too.
  const verified = checked.outcome === 'accepted' || checked.outcome === 'reset_required'
  const result = verified && checked.account.id !== account.id ? OTHER_ACCOUNT : checked
  if (result.outcome === 'accepted') return
  if (result.outcome === 'reset_required') throw refuseResetRequired(context, request, reply, route, result.account, result.reason)
  const reported = route === 'Reauthenticate' ? {} : { route }
  emit(request, result.outcome === 'throttled'
    ? { type: 'session.reauthentication_failed', reason: 'throttled', accountId: account.id, sessionId, device: result.device, ...reported }
    : { type: 'session.reauthentication_failed', reason: result.reason, accountId: account.id, sessionId, ...reported })
  throw refusePassword(result)
}
