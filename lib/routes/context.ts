import type { CheckAccessToken } from '../access-token.js'
import type { CheckPassword } from '../credentials.js'
import type { EmitEvent } from '../events.js'
import type { PasswordHasher } from '../password.js'
import type { PasswordPolicy } from '../password-policy.js'
import type { StoreCall } from '../store-call.js'
import type { AccountStore, RevocationStore } from '../stores/types.js'
import type { TokenService } from '../tokens.js'

/** What the route handlers share, built once at registration. */
export interface RouteContext {
  accounts: AccountStore
  revocations: RevocationStore
  hasher: PasswordHasher
  tokens: TokenService
  policy: PasswordPolicy
  checkPassword: CheckPassword
  checkAccessToken: CheckAccessToken
  storeCall: StoreCall
  emit: EmitEvent
}
