import type { ResetLinks } from '../messages/reset-links.js'
import { removeSecondFactor } from '../mfa/remove-second-factor.js'
import { normalizeEmail } from '../stores/email.js'
import { markResetRequired } from '../stores/reset-required.js'
import type { ActivityRecord } from '../stores/types.js'
import { deleteAccount } from './forget-account.js'
import type { AccountParts } from './parts.js'
import { tellSecondFactorOff } from './second-factor-off.js'

/** Who acts: the admin as the host names them (a user id, an e-mail), written into the action's event. */
export interface AdminActor { admin: string }

/**
 * `fastify.passwordAuth.admin` (contract §22): what support staff may do to an account, never setting or seeing a
 * password. Each action emits an event naming the acting admin; store failures reject (a 503 error). Beyond §22,
 * deleteAccount: DeleteAccount's own deletion (forget-account.ts), for support and erasure requests.
 */
export interface AdminApi {
  /**
   * Ends every session and makes the current password answer 403 PASSWORD_RESET_REQUIRED (after it verified) at
   * Login, ChangePassword and Reauthenticate, until a reset; removes every passkey, whatever
   * `passwordReset.keepPasskeys` says (the account may be in someone else's hands); sends the account a reset link.
   * Needs `passwordReset`. Resolves false if there is no such account.
   */
  requirePasswordReset (accountId: string, actor: AdminActor): Promise<boolean>
  /** Clears the e-mail's attempt counter: its failures and its block. */
  unblock (email: string, actor: AdminActor): Promise<void>
  /**
   * Removes the second factor and ends every session; sends mfa_disabled (and emits mfa.disabled) only if two factors
   * were on. Needs `mfa`. False if there is no such account.
   */
  resetSecondFactor (accountId: string, actor: AdminActor): Promise<boolean>
  /**
   * Ends every session and removes every passkey; sends passkey_removed (and emits passkey.removed) only if there was
   * one. Throws while passkeys are not configured. False if there is no such account.
   */
  removePasskeys (accountId: string, actor: AdminActor): Promise<boolean>
  /**
   * Deletes the account and forgets it everywhere, as DeleteAccount does (every session ends; account_deleted goes to
   * the address and to those it left within revertTtl), without asking `account.beforeDelete`: your code is the one
   * calling. Needs an account store with delete() (not `account.deletion`). False if there is no such account; rejects
   * with the first store failure once the account is gone but not all of it.
   */
  deleteAccount (accountId: string, actor: AdminActor): Promise<boolean>
  /** The account's recent security events, newest first (default and most 100). */
  activity (accountId: string, options?: { limit?: number }): Promise<ActivityRecord[]>
}

/** The account's parts, and the reset link the marked account is sent (messages/reset-links.ts; undefined while resets are off). */
export interface AdminParts extends AccountParts {
  resetLinks: ResetLinks | undefined
  /** What the stores lack for a deletion (account/options.ts), or undefined. */
  deletionNeeds: string | undefined
}

function actorOf (actor: AdminActor | undefined, action: string): string {
  if (typeof actor?.admin !== 'string' || actor.admin.trim() === '') {
    throw new TypeError(`fastify-password-auth: admin.${action} needs { admin }: who acts, as your app names them (it goes into the event)`)
  }
  return actor.admin
}

function accountIdOf (accountId: unknown, action: string): string {
  if (typeof accountId !== 'string' || accountId === '') throw new TypeError(`fastify-password-auth: admin.${action} needs an account id (a string)`)
  return accountId
}

export function createAdmin (parts: AdminParts): AdminApi {
  const { accountService, storeCall, emit, log, sessionService, throttle, activity, passkeys, resetLinks, secondFactor, trustedDevices, outbox, deletionNeeds } = parts
  const caller = { log }

  return {
    async requirePasswordReset (accountId, actor) {
      const admin = actorOf(actor, 'requirePasswordReset')
      if (resetLinks === undefined) {
        throw new TypeError('fastify-password-auth: admin.requirePasswordReset needs passwordReset: true (and deliver): the reset link is the only way back in')
      }
      const account = await accountService.stored(caller, accountIdOf(accountId, 'requirePasswordReset'))
      if (account === null) return false
      // The reset mark on the stored hash, advancing the credential version (every token dies).
      const marking = await accountService.replacePasswordHash(caller, account, (current) => markResetRequired(current.passwordHash))
      if (marking === 'gone') return false
      if (marking === 'raced') throw new Error('fastify-password-auth: admin.requirePasswordReset: the password kept changing under it; try again')
      const sessionsEnded = await sessionService.endAll(undefined, account.id, 'ended_by_admin')
      // As the reset itself would, and after the new credential version: a registration in flight is outrun.
      await passkeys?.removeAll(caller, account.id)
      // The link carries the new credential version, so it works where every older token does not.
      const marked = await accountService.findById(caller, account.id)
      if (marked !== null) await resetLinks.send(caller, marked)
      emit(undefined, { type: 'admin.password_reset_required', admin, accountId: account.id, sessionsEnded })
      return true
    },

    async unblock (email, actor) {
      const admin = actorOf(actor, 'unblock')
      if (typeof email !== 'string' || !email.includes('@')) throw new TypeError('fastify-password-auth: admin.unblock needs an e-mail address')
      const normalised = normalizeEmail(email)
      await throttle.forget(caller, normalised)
      emit(undefined, { type: 'admin.unblocked', admin, email: normalised })
    },

    async resetSecondFactor (accountId, actor) {
      const admin = actorOf(actor, 'resetSecondFactor')
      if (secondFactor === undefined) throw new TypeError('fastify-password-auth: admin.resetSecondFactor: two factors are not configured (the mfa option)')
      const account = await accountService.findById(caller, accountIdOf(accountId, 'resetSecondFactor'))
      if (account === null) return false
      const wasOn = await removeSecondFactor({ secondFactor, trustedDevices }, caller, account.id)
      const sessionsEnded = await sessionService.endAll(undefined, account.id, 'ended_by_admin')
      if (wasOn) tellSecondFactorOff(parts, undefined, account.id, account.email)
      emit(undefined, { type: 'admin.second_factor_reset', admin, accountId: account.id, sessionsEnded })
      return true
    },

    async removePasskeys (accountId, actor) {
      const admin = actorOf(actor, 'removePasskeys')
      if (passkeys === undefined) throw new TypeError('fastify-password-auth: admin.removePasskeys: passkeys are not configured')
      const account = await accountService.findById(caller, accountIdOf(accountId, 'removePasskeys'))
      if (account === null) return false
      // The sessions first: a registration in flight then fails the guard's check, or is outrun by the removal.
      const sessionsEnded = await sessionService.endAll(undefined, account.id, 'ended_by_admin')
      if (await passkeys.removeAll(caller, account.id) > 0) outbox.send(undefined, { type: 'passkey_removed', to: account.email, accountId: account.id })
      emit(undefined, { type: 'admin.passkeys_removed', admin, accountId: account.id, sessionsEnded })
      return true
    },

    async deleteAccount (accountId, actor) {
      const admin = actorOf(actor, 'deleteAccount')
      if (deletionNeeds !== undefined) throw new TypeError(`fastify-password-auth: admin.deleteAccount needs ${deletionNeeds}`)
      const account = await accountService.findById(caller, accountIdOf(accountId, 'deleteAccount'))
      if (account === null) return false
      return await deleteAccount(parts, undefined, account, admin)
    },

    async activity (accountId, { limit = 100 } = {}) {
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) throw new TypeError('fastify-password-auth: admin.activity: limit must be a whole number from 1 to 100')
      return await storeCall(log, 'activity.list', () => activity.list(accountIdOf(accountId, 'activity'), limit))
    }
  }
}
