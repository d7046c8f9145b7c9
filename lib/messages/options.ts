import type { FastifyBaseLogger } from 'fastify'
import type { EmitEvent } from '../common/events.js'
import { assert, isInteger } from '../common/option-rules.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptStore } from '../stores/types.js'
import type { KeyRing } from '../tokens/key-ring.js'
import { MailLimit } from './mail-limit.js'
import { createNewDeviceNotice, type NewDeviceNotice } from './new-device-notice.js'
import { createOutbox, type DeliverMessage, type Outbox } from './outbox.js'

/** The plugin options messages/ reads. */
export interface MessagesPluginOptions {
  /**
   * Sends the plugin's messages (a reset link, "your password was changed"): called after the answer,
   * from a bounded queue; what it throws is logged and reported, never retried. Links are yours to build
   * from your own configured address.
   */
  deliver?: DeliverMessage
  /**
   * Messages of one type per address and sliding hour (default 5); above it nothing of that type is sent,
   * silently. account_exists goes at most once an hour, mfa_code_failed once a day.
   */
  mailLimit?: number
}

export interface ResolvedMessages {
  deliver: DeliverMessage | undefined
  mailLimit: number
}

export function resolveMessages ({ deliver, mailLimit = 5 }: MessagesPluginOptions): ResolvedMessages {
  assert(deliver === undefined || typeof deliver === 'function', 'deliver must be a function (message) => void | Promise<void>')
  assert(isInteger(mailLimit, 1, 1000), 'mailLimit must be a whole number from 1 to 1000')
  return { deliver, mailLimit }
}

interface Parts {
  emit: EmitEvent
  log: FastifyBaseLogger
  attempts: AttemptStore
  keyRing: KeyRing
  storeCall: StoreCall
}

/**
 * The outbox (a no-op without `deliver`), the per-address limit of the messages a request can ask for, and the
 * notice of a sign-in from a new device.
 */
export function createMessages ({ deliver, mailLimit }: ResolvedMessages, { emit, log, attempts, keyRing, storeCall }: Parts):
{ outbox: Outbox, mailLimit: MailLimit, noticeNewDevice: NewDeviceNotice } {
  const outbox = createOutbox(deliver, emit, log)
  const limit = new MailLimit(attempts, mailLimit, storeCall, keyRing)
  return { outbox, mailLimit: limit, noticeNewDevice: createNewDeviceNotice(outbox, limit) }
}
