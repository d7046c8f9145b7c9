import type { CheckPassword } from '../password/credential-check.js'
import type { EmitEvent } from '../events.js'
import type { PasswordHasher } from '../password/hasher.js'
import type { PasswordPolicy } from '../password/policy.js'
import type { RefreshCookie } from '../session/refresh-cookie.js'
import type { SessionService } from '../session/service.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AccountStore } from '../stores/types.js'
import type { KnownDevices } from '../throttle/known-devices.js'
import type { AccessTokens } from '../tokens/access-tokens.js'

/** What the route handlers share, built once at registration. */
export interface RouteContext {
  accounts: AccountStore
  sessionService: SessionService
  accessTokens: AccessTokens
  hasher: PasswordHasher
  policy: PasswordPolicy
  checkPassword: CheckPassword
  knownDevices: KnownDevices
  storeCall: StoreCall
  emit: EmitEvent
  /** Whether a Login replaces a legacy or weaker hash (the upgradeHashes option). */
  upgradeHashes: boolean
  /** Whether refresh tokens are on. */
  refresh: boolean
  /** Seconds a password proof counts as recent for ending sessions. */
  reauthMaxAge: number
  /** Cookie mode: where the refresh token travels instead of the body. */
  cookie: RefreshCookie | undefined
}
