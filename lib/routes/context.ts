import type { CheckPassword } from '../password/credential-check.js'
import type { EmitEvent } from '../common/events.js'
import type { PasswordHasher } from '../password/hasher.js'
import type { PasswordPolicy } from '../password/policy.js'
import type { SecureCookie } from '../http/secure-cookie.js'
import type { SessionService } from '../session/service.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AccountStore } from '../stores/types.js'
import type { MailLimit } from '../messages/mail-limit.js'
import type { Outbox } from '../messages/outbox.js'
import type { AttemptThrottle } from '../throttle/attempt-throttle.js'
import type { KnownDevices } from '../throttle/known-devices.js'
import type { OneTimeTokens } from '../tokens/one-time-tokens.js'
import type { AccessTokens } from '../tokens/access-tokens.js'
import type { SecondFactor } from '../mfa/second-factor.js'

/** What the route handlers share, built once at registration. */
export interface RouteContext {
  accounts: AccountStore
  sessionService: SessionService
  accessTokens: AccessTokens
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
  /** Reset links and pending registrations. */
  oneTimeTokens: OneTimeTokens
  /** ForgotPassword and ResetPassword, when on: a reset token's lifetime. */
  passwordReset: { ttlMs: number } | undefined
  /** Register and VerifyEmail, when on: a verification token's lifetime and the host's own fields. */
  registration: { ttlMs: number, fields: Record<string, object> } | undefined
  /** Two factors, when on, and a login challenge's lifetime. */
  secondFactor: SecondFactor | undefined
  mfaTtlMs: number
  /** Cookie mode: where the refresh token travels instead of the body. */
  cookie: SecureCookie | undefined
}
