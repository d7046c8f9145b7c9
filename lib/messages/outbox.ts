import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import type { EmitEvent } from '../common/events.js'

/** What the plugin asks the host to send (contract §17). Links are the host's to build, from its own address. */
/** Every type of message, in the order they came. */
export const MESSAGE_TYPES = [
  'password_reset', 'password_changed', 'verify_email', 'account_exists', 'mfa_enabled', 'mfa_disabled', 'mfa_code_failed',
  // Account self-service (contract §19): the link to a new address, the notice to the old one, the revert link, the goodbye.
  'email_change', 'email_change_requested', 'email_changed', 'account_deleted',
  // A passkey added or removed by its owner (contract §18), or every one by an admin's removePasskeys (§22).
  'passkey_removed', 'passkey_added',
  // A sign-in without a live device token of the account (contract §21).
  'new_device_login'
] as const

export interface PasswordAuthMessage {
  type: typeof MESSAGE_TYPES[number]
  /** The account's normalised e-mail address. */
  to: string
  /** The one-time token to put in a link (password_reset, verify_email, email_change, email_changed). Reaches `deliver` and nothing else. */
  token?: string
  /** email_change_requested: the new address, masked (`a***@example.net`): the old address learns of the change, not where to. */
  newEmail?: string
  /** Epoch milliseconds the token dies at. */
  expiresAt?: number
  accountId?: string
  /** passkey_added, passkey_removed: the passkey's name, for the mail. */
  passkeyName?: string
  /** new_device_login: when (epoch milliseconds), from which address (as Fastify's trustProxy gives it) and what kind of device ("Chrome on macOS"). */
  at?: number
  ip?: string
  device?: string
}

export type DeliverMessage = (message: PasswordAuthMessage) => void | Promise<void>

/**
 * Notices of changes the owner made or must hear of (contract §13): a lane of their own in the queue, so
 * bulk messages (links, account_exists) can neither fill it nor hold every `deliver` call.
 */
export const SECURITY_NOTICES: ReadonlySet<string> = new Set([
  'password_changed', 'mfa_enabled', 'mfa_disabled', 'mfa_code_failed', 'email_changed', 'passkey_added', 'passkey_removed', 'new_device_login',
  'email_change_requested', 'account_deleted'
])

/** Messages waiting for `deliver` at most, per lane (beyond them a message is dropped, with an event). */
const MAX_PENDING = 1000
/** `deliver` calls at once; bulk messages take one less, so a notice always finds a free one. */
const CONCURRENCY = 4
/** A `deliver` call that has not settled by then counts as failed and frees its place. */
const DELIVER_TIMEOUT_MS = 30_000

export interface Outbox {
  /** Whether the host gave a `deliver`: without one, nothing is sent and no budget need be counted. */
  readonly delivers: boolean
  /**
   * Runs `job` once the response has been sent, so neither its store calls nor its delivery shows in the
   * answer's timing. Errors are the job's to report; what escapes is logged.
   */
  afterResponse (reply: FastifyReply, job: () => Promise<void>): void
  /** Hands a message to `deliver` through the bounded queue: never retried, never changing an answer. */
  send (request: FastifyRequest | undefined, message: PasswordAuthMessage): void
}

export function createOutbox (deliver: DeliverMessage | undefined, emit: EmitEvent, log: FastifyBaseLogger): Outbox {
  type Waiting = Array<{ request: FastifyRequest | undefined, message: PasswordAuthMessage }>
  const notices: Waiting = []
  const bulk: Waiting = []
  let running = 0
  let bulkRunning = 0

  const fail = (request: FastifyRequest | undefined, message: PasswordAuthMessage, reason: 'error' | 'timeout' | 'queue_full', err?: unknown): void => {
    // The message holds a token: only its type and account are reported, never the message itself, and a
    // mailer's error text that quotes the token has it redacted.
    const text = err instanceof Error && message.token !== undefined ? err.message.replaceAll(message.token, '[Redacted]') : (err as Error | undefined)?.message
    ;(request?.log ?? log).error({ messageType: message.type, err: text === undefined ? undefined : { message: text } },
      `fastify-password-auth: a ${message.type} message was not delivered (${reason})`)
    emit(request, { type: 'message.failed', messageType: message.type, accountId: message.accountId, reason })
  }

  const next = (): void => {
    while (running < CONCURRENCY) {
      const lane = notices.length > 0 ? notices : bulk.length > 0 && bulkRunning < CONCURRENCY - 1 ? bulk : undefined
      if (lane === undefined) return
      const { request, message } = lane.shift()!
      const isBulk = lane === bulk
      running++
      if (isBulk) bulkRunning++
      let timer: NodeJS.Timeout | undefined
      // unref: a delivery still running does not hold a closing server open for its 30 s.
      const timeout = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => { resolve('timeout') }, DELIVER_TIMEOUT_MS).unref() })
      Promise.race([(async () => { await deliver!(message) })().then(() => 'sent' as const), timeout])
        .then((outcome) => { if (outcome === 'timeout') fail(request, message, 'timeout') }, (err: unknown) => { fail(request, message, 'error', err) })
        .finally(() => { clearTimeout(timer); running--; if (isBulk) bulkRunning--; next() })
    }
  }

  return {
    delivers: deliver !== undefined,
    afterResponse (reply, job) {
      let started = false
      const run = (): void => {
        if (started) return
        started = true
        job().catch((err: unknown) => { reply.log.error({ err }, 'fastify-password-auth: work after the response failed') })
      }
      // Sent ('finish'), or the client went away first ('close'): the work is done either way.
      if (reply.raw.writableFinished) setImmediate(run)
      else reply.raw.once('finish', run).once('close', run)
    },
    send (request, message) {
      if (deliver === undefined) return
      const lane = SECURITY_NOTICES.has(message.type) ? notices : bulk
      if (lane.length >= MAX_PENDING) {
        fail(request, message, 'queue_full')
        return
      }
      lane.push({ request, message })
      next()
    }
  }
}
