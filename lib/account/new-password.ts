import type { FastifyRequest } from 'fastify'
import type { PasswordAuthAccount } from '../stores/types.js'
import type { AccountParts } from './parts.js'

/** How the password was replaced: by its owner with the current one (ChangePassword), or with a reset link (ResetPassword). */
export type NewPasswordBy = { via: 'password_changed' } | { via: 'password_reset', keepPasskeys: boolean }

/**
 * Everything that ends after the account's password was replaced with a new credential version, which already
 * rejects every earlier token and trusted device (a reset must leave no device that skips the code: Better Auth
 * #2728); ending the trusts and sessions tidies up the host's lists, so a session store failure does not undo the
 * change. A reset (the mailbox proved) also removes the passkeys unless the host keeps them (contract §18: again
 * now that no earlier token works, so one registered meanwhile goes too), and lifts the address's and the code's
 * counters. The owner hears of it (password_changed).
 */
export async function afterNewPassword ({ trustedDevices, sessionService, passkeys, throttle, secondFactor, outbox }: AccountParts,
  request: FastifyRequest, account: PasswordAuthAccount, by: NewPasswordBy): Promise<void> {
  await trustedDevices?.endAll(request, account.id, by.via)
  await sessionService.endAll(request, account.id, 'password_changed').catch(() => {})
  if (by.via === 'password_reset') {
    if (passkeys !== undefined && !by.keepPasskeys) await passkeys.removeAll(request, account.id, 'password_reset')
    await throttle.reset(request, account.email).catch(() => {})
    await secondFactor?.clearFailures(request, account.id).catch(() => {})
  }
  outbox.send(request, { type: 'password_changed', to: account.email, accountId: account.id })
}
