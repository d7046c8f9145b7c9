import type { FastifyRequest } from 'fastify'
import type { PasswordAuthAccount } from '../stores/types.js'
import { EMAIL_CHANGE } from './email-purposes.js'
import type { AccountParts } from './parts.js'

/**
 * How the password was replaced: by its owner with the current one (ChangePassword), with a reset link
 * (ResetPassword), or with a revert link by whoever lost the account through a change they did not make
 * (RevertEmailChange, whose two factors and trusted devices went already).
 */
export type NewPasswordBy = { via: 'password_changed' } | { via: 'password_reset', keepPasskeys: boolean } | { via: 'email_reverted' }

/**
 * The one list of what ends after the account's password was replaced with a new credential version, which already
 * rejects every earlier token and trusted device (a reset must leave no device that skips the code: Better Auth
 * #2728). Ending the trusts and sessions tidies up the host's lists, so a session store failure does not undo a change
 * or a reset. Passkeys go (contract §18: again now that no earlier token works, so one registered meanwhile goes too)
 * after a reset unless the host keeps them, and after a revert; the mailbox proved, the address's counter (and after a
 * reset the code's) is lifted; after a revert whatever the taker had pending (a change, a reset link) dies. The owner
 * hears of it (password_changed).
 */
export async function afterNewPassword ({ trustedDevices, sessionService, passkeys, throttle, secondFactor, oneTimeTokens, outbox }: AccountParts,
  request: FastifyRequest, account: Pick<PasswordAuthAccount, 'id' | 'email'>, by: NewPasswordBy): Promise<void> {
  const { id, email } = account
  if (by.via === 'email_reverted') {
    await sessionService.endAll(request, id, 'email_changed')
    await passkeys?.removeAll(request, id)
    await oneTimeTokens.forget(request, id, [EMAIL_CHANGE, 'password_reset'])
    await throttle.forget(request, email).catch(() => {})
  } else {
    await trustedDevices?.endAll(request, id, by.via)
    await sessionService.endAll(request, id, 'password_changed').catch(() => {})
  }
  if (by.via === 'password_reset') {
    if (passkeys !== undefined && !by.keepPasskeys) await passkeys.removeAll(request, id, 'password_reset')
    await throttle.reset(request, email).catch(() => {})
    await secondFactor?.clearFailures(request, id).catch(() => {})
  }
  outbox.send(request, { type: 'password_changed', to: email, accountId: id })
}
