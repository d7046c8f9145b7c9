import type { FastifyBaseLogger } from 'fastify'
import type { AccountActivity } from '../account/activity.js'
import type { ResolvedAccount } from '../account/options.js'
import type { AccountService } from '../account/service.js'
import type { EmitEvent } from '../common/events.js'
import type { SecureCookie } from '../http/secure-cookie.js'
import type { MailLimit } from '../messages/mail-limit.js'
import type { NewDeviceNotice } from '../messages/new-device-notice.js'
import type { Outbox } from '../messages/outbox.js'
import type { ResetLinks } from '../messages/reset-links.js'
import type { SecondFactor } from '../mfa/second-factor.js'
import type { Passkeys } from '../passkeys/passkeys.js'
import type { BreachCheck } from '../password/breach-options.js'
import type { TrustedDevices } from '../mfa/trusted-devices.js'
import type { CheckPassword } from '../password/credential-check.js'
import type { HashQueue } from '../password/hash-queue.js'
import type { PasswordHasher } from '../password/hasher.js'
import type { PasswordPolicy } from '../password/policy.js'
import type { SessionService } from '../session/service.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptThrottle } from '../throttle/attempt-throttle.js'
import type { KnownDevices } from '../throttle/known-devices.js'
import type { AccessTokens } from '../tokens/access-tokens.js'
import type { OneTimeTokens } from '../tokens/one-time-tokens.js'

/** What the route handlers share, built once at registration. */
export interface RouteContext {
  /** The account store's one door: the routes read and write accounts through it alone. */
  accountService: AccountService
  /** The plugin's log, for what the account's rules do outside a request. */
  log: FastifyBaseLogger
  sessionService: SessionService
  accessTokens: AccessTokens
  /** Where every argon2 run waits: the routes that hash shed at once when it is full. */
  hashQueue: HashQueue
  hasher: PasswordHasher
  policy: PasswordPolicy
  checkPassword: CheckPassword
  throttle: AttemptThrottle
  knownDevices: KnownDevices
  storeCall: StoreCall
  emit: EmitEvent
  /** Whether a Login replaces a legacy or weaker hash (the upgradeHashes option). */
  upgradeHashes: boolean
  /** Whether refresh tokens are on. */
  refresh: boolean
  /** Seconds a password proof counts as recent for ending sessions. */
  reauthMaxAge: number
  /** Messages for the host's `deliver` (a no-op without one), and the per-address limit of those that can be asked for. */
  outbox: Outbox
  mailLimit: MailLimit
  /** A password_reset link for a refused password (refuseResetRequired), while resets are on. */
  resetLinks: ResetLinks | undefined
  /** Reset links, pending registrations and login challenges. */
  oneTimeTokens: OneTimeTokens
  /** Two factors, when on, and a login challenge's lifetime. */
  secondFactor: SecondFactor | undefined
  mfaTtlMs: number
  /** Cookie mode: where the refresh token travels instead of the body. */
  refreshCookie: SecureCookie | undefined
  /** Account self-service (contract §19): which routes are on, and their settings. */
  account: ResolvedAccount
  /** The accounts' security events (admin.activity); an account's go with it. */
  activity: AccountActivity
  /** Passkeys, when on. */
  passkeys: Passkeys | undefined
  /**
   * Tells the owner of a sign-in without a live device token of the account (new_device_login, contract §21).
   * The end of every sign-in calls it (sign-in/finish-sign-in.ts); true when it was a new device.
   */
  noticeNewDevice: NewDeviceNotice
  /** Devices trusted for the second factor, when two factors are on and mfa.trustDays is set. */
  trustedDevices: TrustedDevices | undefined
  /** The breached-password range service, when one is configured (contract §20). */
  breachCheck: BreachCheck | undefined
}

/** The context of the routes that exist only with two factors on. */
export type MfaRouteContext = RouteContext & { secondFactor: SecondFactor }

/** The context of the routes that exist only with passkeys on. */
export type PasskeyRouteContext = RouteContext & { passkeys: Passkeys }
