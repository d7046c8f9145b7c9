import type { FastifyBaseLogger } from 'fastify'
import type { AuthEvent, AuthEventHandler } from '../common/events.js'
import type { ActivityRecord, ActivityStore } from '../stores/types.js'

/** Not kept: the account is gone and with it its activity (account.deleted is the host's onEvent's to keep). */
const NOT_KEPT: ReadonlySet<string> = new Set(['account.deleted'])

/**
 * Routine, not activity (contract §22): a client refreshes its session every few minutes, and anyone holding an
 * old refresh token can send it again and again; kept, they would bury the account's security events. A reused
 * token's theft detection is kept (session.reuse_detected), and so is every session's start and end.
 */
const ROUTINE: ReadonlySet<string> = new Set(['session.refreshed', 'session.refresh_failed'])

/** The record of an event of an account: events carry no password, hash or token (contract §10), so neither does it. */
function recordOf (event: AuthEvent & { accountId: string }): ActivityRecord {
  const { type, time, requestId, ip, accountId, ...details } = event
  const record: ActivityRecord = { type, time, accountId, details }
  if (requestId !== undefined) record.requestId = requestId
  if (ip !== undefined) record.ip = ip
  return record
}

/**
 * The event handler that keeps every event naming an account in the activity store, then calls the host's
 * onEvent. A store failure is logged and never changes an answer or the host's events.
 */
export function recordActivity (store: ActivityStore, host: AuthEventHandler | undefined, log: FastifyBaseLogger): AuthEventHandler {
  return function onEvent (event) {
    const { accountId } = event as { accountId?: unknown }
    if (typeof accountId === 'string' && accountId !== '' && !NOT_KEPT.has(event.type) && !ROUTINE.has(event.type)) {
      store.add(recordOf(event as AuthEvent & { accountId: string })).catch((err: unknown) => {
        log.error({ err: { message: (err as Error)?.message } }, 'fastify-password-auth: the activity store failed to keep an event')
      })
    }
    return host?.(event)
  }
}
