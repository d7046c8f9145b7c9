import type { FastifyBaseLogger } from 'fastify'
import type { EmitEvent } from '../common/events.js'
import type { MailLimit } from '../messages/mail-limit.js'
import type { Outbox } from '../messages/outbox.js'
import type { SecondFactor } from '../mfa/second-factor.js'
import type { TrustedDevices } from '../mfa/trusted-devices.js'
import type { Passkeys } from '../passkeys/passkeys.js'
import type { SessionService } from '../session/service.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptThrottle } from '../throttle/attempt-throttle.js'
import type { OneTimeTokens } from '../tokens/one-time-tokens.js'
import type { AccountActivity } from './activity.js'
import type { AccountService } from './service.js'

/**
 * What the account's rules act on, from the rooms below: the account store's door, and everything else the plugin
 * holds of an account. The routes' context has them all; the admin API gets them from plugin.ts.
 */
export interface AccountParts {
  accountService: AccountService
  sessionService: SessionService
  oneTimeTokens: OneTimeTokens
  throttle: AttemptThrottle
  mailLimit: MailLimit
  outbox: Outbox
  activity: AccountActivity
  storeCall: StoreCall
  emit: EmitEvent
  /** For the host's calls (admin), made outside any request. */
  log: FastifyBaseLogger
  /** Two factors, and the devices trusted for them, when on. */
  secondFactor: SecondFactor | undefined
  trustedDevices: TrustedDevices | undefined
  /** Passkeys, when on. */
  passkeys: Passkeys | undefined
}
