import type { CheckPassword } from '../credentials.js'
import type { EmitEvent } from '../events.js'
import type { PasswordHasher } from '../password.js'
import type { PasswordPolicy } from '../password-policy.js'
import type { RefreshCookie } from '../refresh-cookie.js'
import type { SessionService } from '../sessions.js'
import type { StoreCall } from '../store-call.js'
import type { AccountStore } from '../stores/types.js'
import type { AccessTokens } from '../tokens.js'

/** What the route handlers share, built once at registration. */
export interface RouteContext {
  accounts: AccountStore
  sessions: SessionService
  accessTokens: AccessTokens
  hasher: PasswordHasher
  policy: PasswordPolicy
  checkPassword: CheckPassword
  storeCall: StoreCall
  emit: EmitEvent
  /** Whether refresh tokens are on. */
  refresh: boolean
  /** Cookie mode: where the refresh token travels instead of the body. */
  cookie?: RefreshCookie
}
