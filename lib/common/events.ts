import type { FastifyBaseLogger, FastifyRequest } from 'fastify'

/** Why a session ended: the `session.ended` event says it, and the session store records it. */
export type SessionEndReason =
  | 'logout' | 'password_changed' | 'refresh_token_reused' | 'ended_by_host' | 'ended_by_user' | 'account_inactive' | 'credentials_changed'
  /** Two factors were turned on or off in another session. */
  | 'mfa_changed'
  /** The account was deleted (DeleteAccount), or its address changed or was reverted (other sessions end). */
  | 'account_deleted' | 'email_changed'
  /** An admin acted on the account (fastify.passwordAuth.admin). */
  | 'ended_by_admin'

export type LoginFailureReason =
  | 'unknown_account'
  | 'wrong_password'
  | 'inactive_account'
  /** The stored hash is in no format the plugin can verify (or bcrypt's optional dependency is missing). */
  | 'unsupported_hash'

export type ChangeFailureReason =
  | LoginFailureReason
  | 'throttled'
  /** Another change (or a rehash) replaced the password between verification and update. */
  | 'conflict'

/** Why VerifyEmail refused: the token is not live (unknown, used, expired), or the address got an account meanwhile. */
export type VerificationFailureReason = 'invalid_token' | 'taken'

/** Why a breached-password lookup gave no answer. */
export type BreachCheckFailure = 'timeout' | 'error' | 'status' | 'garbage' | 'busy'

/** The routes that verify the account's current password. */
export type PasswordRoute = 'Login' | 'ChangePassword' | 'Reauthenticate' | 'Mfa/Confirm' | 'Mfa/Disable' | 'Mfa/RecoveryCodes' | 'ChangeEmail' | 'DeleteAccount' | 'Passkeys'

/** Why a verified password may not be used: an admin required a reset, or it is known to be breached. */
export type ResetRequiredReason = 'admin' | 'breached'

/**
 * Why trusts of devices for the second factor ended (contract §21): the owner removed one, or every one ended
 * because two factors were turned on or off, the password changed or was reset, or EndOthers ran.
 */
export type TrustEndReason = 'removed' | 'mfa_changed' | 'password_changed' | 'password_reset' | 'sessions_ended'

/** The routes that take a second-factor code. */
export type MfaRoute = 'LoginMfa' | 'Mfa/Confirm' | 'Mfa/RecoveryCodes' | 'Mfa/Disable' | 'ResetPassword' | 'Reauthenticate' | 'ChangePassword'

export type RefreshFailureReason =
  /** Not a refresh token of this server: malformed, or authenticated by no configured key. */
  | 'invalid'
  /** The store knows nothing of the session: forgotten after it expired or ended, or never there. */
  | 'unknown'
  | 'expired'
  | 'idle'
  | 'reused'
  | 'ended'
  | 'account_inactive'
  | 'account_deleted'
  | 'credentials_changed'

/** The routes that take a passkey response. */
export type PasskeyRoute = 'Passkeys' | 'LoginPasskey' | 'Reauthenticate' | 'LoginMfa'

/**
 * Why a passkey response was refused (one answer for all of them): the challenge was unknown, used, of another
 * purpose or account; the credential is not stored; the library's verification failed (origin, rpId, type,
 * signature, user presence or verification); `cross_origin` set; the user handle is not the owner's; the
 * owner is inactive or not the caller; the counter did not grow on a device-bound passkey; a concurrent use won.
 * At registration also: the credential id is stored already (`duplicate`), or every passkey of the account was
 * removed while the registration was in flight (`outrun`).
 */
export type PasskeyFailureReason =
  | 'challenge' | 'unknown_credential' | 'verification' | 'cross_origin' | 'user_handle' | 'inactive_account' | 'wrong_account'
  | 'counter_regressed' | 'counter_conflict' | 'duplicate' | 'outrun'

/** What the plugin reports. Never carries a password, a hash or a token. */
export type AuthEventDetails =
  /**
   * `mfa`: the session proved a second factor (LoginMfa, or a trusted device: `trustedDevice`); `passkey`: it started
   * with a passkey. `newDevice`: the request had no live device token of the account, so its owner is told (new_device_login).
   */
  | { type: 'login.succeeded', accountId: string, email: string, sessionId: string, mfa?: boolean, passkey?: boolean, trustedDevice?: boolean, newDevice?: boolean }
  /** The password was right and the account has two factors on: Login answered a challenge, no session. */
  | { type: 'login.mfa_required', accountId: string, email: string }
  /**
   * A second-factor code was refused (`invalid`: wrong, replayed, used, or the challenge is not live) or not
   * checked (`throttled`: the code counter, the account's or a known device's, is blocked, or locked after 100
   * failures in a row until a password reset). `route` names where it was sent.
   */
  | { type: 'mfa.failed', route: MfaRoute, reason: 'invalid' | 'throttled', accountId?: string }
  /**
   * A route of an account with two factors on got no code (a client that asks for one after this answer):
   * 401 MFA_CODE_INVALID, nothing counted, not a failed second factor.
   */
  | { type: 'mfa.code_required', route: MfaRoute, accountId: string }
  /** Two factors were turned on or off (every other session ended), or the recovery codes replaced. */
  | { type: 'mfa.enabled' | 'mfa.disabled' | 'mfa.recovery_codes_replaced', accountId: string }
  | { type: 'login.failed', reason: LoginFailureReason, accountId?: string, email: string }
  /** `device`: judged on a known device's own counter (contract §6) rather than the e-mail's. */
  | { type: 'login.throttled', email: string, retryAfter: number, device: boolean }
  /**
   * A failure (Login, ChangePassword or Reauthenticate) started a block of `seconds`: once per block, so
   * the host can tell the owner. `device`: the block is a known device's own; the e-mail's counter is untouched.
   */
  | { type: 'login.blocked', email: string, accountId?: string, device: boolean, seconds: number }
  | { type: 'password.changed', accountId: string, email: string }
  /** A login replaced a legacy or weaker hash with argon2id; `from` names the old format. */
  | { type: 'password.rehashed', accountId: string, email: string, from: string }
  /**
   * A login kept a legacy hash that needed an upgrade. `bcrypt_72_bytes`: bcrypt read only the first 72
   * bytes of the password, so any password sharing them verifies; hashing the one that came would lock
   * the owner's real one out. A password change replaces the hash.
   */
  | { type: 'password.rehash_skipped', accountId: string, email: string, reason: 'bcrypt_72_bytes' }
  /** `device` is set with reason 'throttled': whether a known device's counter was the one blocked. */
  | { type: 'password.change_failed', reason: ChangeFailureReason, accountId?: string, email: string, device?: boolean }
  /** `tokenId` is the access token's; absent when a cookie-mode Logout went by the refresh cookie alone. */
  | { type: 'logout', accountId: string, sessionId: string, tokenId?: string }
  | { type: 'session.started', accountId: string, sessionId: string }
  | { type: 'session.refreshed', accountId: string, sessionId: string, grace: boolean }
  | { type: 'session.refresh_failed', reason: RefreshFailureReason, accountId?: string, sessionId?: string }
  | { type: 'session.reuse_detected', accountId: string, sessionId: string }
  /** Reauthenticate: the password was proved again (succeeded) or not (failed, with Login's reasons or 'throttled'). */
  | { type: 'session.reauthenticated', accountId: string, sessionId: string }
  /** `route`: a password sent with Mfa/Confirm, Disable or RecoveryCodes, ChangeEmail, DeleteAccount or Passkeys, which stands for their recent authentication; absent for Reauthenticate. */
  | { type: 'session.reauthentication_failed', reason: LoginFailureReason | 'throttled', accountId: string, sessionId: string, device?: boolean, route?: 'Mfa/Confirm' | 'Mfa/Disable' | 'Mfa/RecoveryCodes' | 'ChangeEmail' | 'DeleteAccount' | 'Passkeys' }
  /**
   * ForgotPassword, after its answer: a reset message went out (`sent`), or none did and why. The same
   * 202 was answered in every case.
   */
  | { type: 'password.reset_requested', email: string, accountId?: string, outcome: 'sent' | 'unknown_account' | 'inactive_account' | 'limited' }
  /** ResetPassword set a new password: every session of the account ended. */
  | { type: 'password.reset', accountId: string, email: string }
  | { type: 'password.reset_failed', reason: 'invalid_token' | 'conflict', accountId?: string }
  /**
   * Register, after its answer: a verification link went out (`sent`), the owner of the taken address was
   * told (`account_exists`), or nothing went out and why. The same 202 was answered in every case.
   */
  | { type: 'account.registration_requested', email: string, accountId?: string, outcome: 'sent' | 'account_exists' | 'inactive_account' | 'limited' }
  /** VerifyEmail created the account. */
  | { type: 'account.registered', accountId: string, email: string }
  | { type: 'account.verification_failed', reason: VerificationFailureReason }
  /** A message for `deliver` was lost: `deliver` threw or hung, or too many were waiting. Never retried. */
  | { type: 'message.failed', messageType: string, accountId?: string, reason: 'error' | 'timeout' | 'queue_full' }
  /** Every end of a session but Logout's, which is the `logout` event. */
  | { type: 'session.ended', accountId: string, sessionId: string, reason: Exclude<SessionEndReason, 'logout'> }
  /**
   * The breached-password range service gave no answer (contract §20): `timeout`, `error` (network),
   * `status` (not 200), `garbage` (not SUFFIX:COUNT lines), `busy` (64 lookups of new passwords in flight already,
   * or no place for a current one within its timeout). A `new` password then passed on the rest of the policy, or
   * was refused with 503 (onUnavailable 'refuse'); a `current` one (Login, ChangePassword, Reauthenticate,
   * Mfa/Confirm, Disable, RecoveryCodes) went on as if not breached.
   */
  | { type: 'password.breach_check_unavailable', reason: BreachCheckFailure, password: 'new' | 'current', accountId?: string }
  /**
   * The password verified but may not be used (403 PASSWORD_RESET_REQUIRED): `admin`, an admin required a reset
   * (requirePasswordReset); `breached`, the password is known to be breached. A reset link goes out after the answer.
   */
  | { type: 'password.reset_required', route: PasswordRoute, reason: ResetRequiredReason, accountId: string, email: string }
  /**
   * ChangeEmail, after its answer: a link went to the new address (`sent`), its owner was told (`account_exists`),
   * or nothing went out and why. The same 202 was answered in every case. `to` is never the new address (it may be another's).
   */
  | { type: 'account.email_change_requested', accountId: string, email: string, outcome: 'sent' | 'account_exists' | 'own_address' | 'limited' }
  /** VerifyEmailChange moved the account to `email` from `previousEmail`; RevertEmailChange moved it back (`reverted`). */
  | { type: 'account.email_changed' | 'account.email_reverted', accountId: string, email: string, previousEmail: string }
  | { type: 'account.email_change_failed', route: 'VerifyEmailChange' | 'RevertEmailChange', reason: 'invalid_token' | 'conflict' | 'taken', accountId?: string }
  /**
   * DeleteAccount removed the account and everything of it; `refused`: the host's beforeDelete said no. `leftovers`:
   * the store calls that failed after the account was gone (the answer was 503): inert, they expire by themselves.
   */
  | { type: 'account.deleted' | 'account.delete_refused', accountId: string, email: string, leftovers?: string[] }
  | { type: 'account.exported', accountId: string }
  /** An admin of the host acted on the account (fastify.passwordAuth.admin); `admin` is who, as the host named them. */
  | { type: 'admin.password_reset_required' | 'admin.second_factor_reset' | 'admin.passkeys_removed', admin: string, accountId: string, sessionsEnded: number }
  | { type: 'admin.unblocked', admin: string, email: string }
  | { type: 'admin.account_deleted', admin: string, accountId: string }
  /** A passkey was added (`synced`: backup eligible). Its id is the public credential id. */
  | { type: 'passkey.registered', accountId: string, passkeyId: string, synced: boolean }
  /** Passkeys were removed: by their owner, by a password reset, or by the host. */
  | { type: 'passkey.removed', accountId: string, passkeyId?: string, count: number, reason: 'user' | 'password_reset' | 'host' }
  /** A passkey response was accepted at `route`. */
  | { type: 'passkey.used', route: PasskeyRoute, accountId: string, passkeyId: string }
  | { type: 'passkey.failed', route: PasskeyRoute, reason: PasskeyFailureReason, accountId?: string, passkeyId?: string }
  /** The signature counter did not grow: refused on a device-bound passkey, accepted on a synced one. */
  | { type: 'passkey.counter_regressed', accountId: string, passkeyId: string, synced: boolean, storedCounter: number, receivedCounter: number }
  /** A LoginMfa with rememberDevice trusted its device for the second factor (contract §21). */
  | { type: 'mfa.device_trusted', accountId: string, trustId: string }
  /** The owner removed one trusted device (`trustId`), or every trust of the account ended (no `trustId`). */
  | { type: 'mfa.device_trust_ended', accountId: string, trustId?: string, reason: TrustEndReason }

export type AuthEvent = AuthEventDetails & {
  /** Epoch milliseconds. */
  time: number
  /** The request that caused the event; undefined for the host API called outside a request. */
  requestId: string | undefined
  ip: string | undefined
}

export type AuthEventType = AuthEvent['type']

export type AuthEventHandler = (event: AuthEvent) => void | Promise<void>

/** Reports an event, attributed to `request` when there is one. */
export type EmitEvent = (request: FastifyRequest | undefined, details: AuthEventDetails) => void

const LEVELS: Record<AuthEventType, 'info' | 'warn'> = {
  'login.succeeded': 'info',
  'login.failed': 'info',
  'login.throttled': 'warn',
  'login.blocked': 'warn',
  'password.changed': 'info',
  'password.rehashed': 'info',
  'password.rehash_skipped': 'info',
  'password.change_failed': 'info',
  logout: 'info',
  'session.started': 'info',
  'session.refreshed': 'info',
  'session.refresh_failed': 'info',
  'session.reuse_detected': 'warn',
  'session.reauthenticated': 'info',
  'session.reauthentication_failed': 'info',
  'session.ended': 'info',
  'password.reset_requested': 'info',
  'password.reset': 'info',
  'password.reset_failed': 'info',
  'message.failed': 'warn',
  'account.registration_requested': 'info',
  'account.registered': 'info',
  'account.verification_failed': 'info',
  'login.mfa_required': 'info',
  'mfa.failed': 'warn',
  'mfa.code_required': 'info',
  'mfa.enabled': 'info',
  'mfa.disabled': 'info',
  'mfa.recovery_codes_replaced': 'info',
  'password.reset_required': 'warn',
  'account.email_change_requested': 'info',
  'account.email_changed': 'info',
  'account.email_reverted': 'warn',
  'account.email_change_failed': 'info',
  'account.deleted': 'info',
  'account.delete_refused': 'info',
  'account.exported': 'info',
  'admin.password_reset_required': 'info',
  'admin.second_factor_reset': 'info',
  'admin.passkeys_removed': 'info',
  'admin.unblocked': 'info',
  'admin.account_deleted': 'info',
  'passkey.registered': 'info',
  'passkey.removed': 'info',
  'passkey.used': 'info',
  'passkey.failed': 'warn',
  'passkey.counter_regressed': 'warn',
  'mfa.device_trusted': 'info',
  'mfa.device_trust_ended': 'info',
  'password.breach_check_unavailable': 'warn'
}

/**
 * Builds the reporter: every event goes to the request logger and to the host's handler, whose errors
 * (thrown or rejected) are logged and never change the response.
 */
export function createEventEmitter (handler: AuthEventHandler | undefined, instanceLog: FastifyBaseLogger): EmitEvent {
  return function emit (request, details) {
    // Not `{ ...details, time, … }`: on Node 20 a spread followed by more properties takes V8's slow path (~2 µs).
    const event: AuthEvent = Object.assign({}, details, { time: Date.now(), requestId: request?.id, ip: request?.ip })
    const log = request?.log ?? instanceLog
    log[LEVELS[event.type]]({ authEvent: event }, `fastify-password-auth: ${event.type}`)
    if (handler === undefined) return
    try {
      const result = handler(event)
      if (result !== undefined && typeof result.then === 'function') {
        result.then(undefined, (err: unknown) => { logHandlerError(log, err) })
      }
    } catch (err) {
      logHandlerError(log, err)
    }
  }
}

function logHandlerError (log: FastifyBaseLogger, err: unknown): void {
  log.error({ err }, 'fastify-password-auth: the onEvent handler failed')
}
