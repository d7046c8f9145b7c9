import type { FastifyBaseLogger } from 'fastify'
import type { AuthEvent, AuthEventHandler } from '../common/events.js'
import { activityAddAtOnce } from '../stores/at-once.js'
import type { ActivityRecord, ActivityStore } from '../stores/types.js'

/** The activity as the routes and admin use it: read, and forgotten with its account. */
export type AccountActivity = Pick<ActivityStore, 'list' | 'forget'>

/** Not kept: the account is gone and with it its activity (the deletion's events are the host's onEvent's to keep). */
const NOT_KEPT: ReadonlySet<string> = new Set(['account.deleted', 'admin.account_deleted'])

/**
 * Routine, not activity (contract §22): a client refreshes its session every few minutes, and anyone holding an
 * old refresh token can send it again and again; kept, they would bury the account's security events. A reused
 * token's theft detection is kept (session.reuse_detected), and so is every session's start and end.
 */
const ROUTINE: ReadonlySet<string> = new Set(['session.refreshed', 'session.refresh_failed'])

/** The event's own fields, which the record keeps beside its details rather than in them. */
const RECORD_FIELDS: ReadonlySet<string> = new Set(['type', 'time', 'requestId', 'ip', 'accountId'])

/** The record of an event of an account: events carry no password, hash or token (contract §10), so neither does it. */
function recordOf (event: AuthEvent & { accountId: string }): ActivityRecord {
  const { type, time, requestId, ip, accountId } = event
  // Not an object rest (`...details`): V8 copies those through a runtime call, on every event kept.
  const details: Record<string, unknown> = {}
  for (const key in event) if (!RECORD_FIELDS.has(key)) details[key] = (event as Record<string, unknown>)[key]
  const record: ActivityRecord = { type, time, accountId, details }
  if (requestId !== undefined) record.requestId = requestId
  if (ip !== undefined) record.ip = ip
  return record
}

/** How long events naming a deleted account are still dropped: past every delivery of its last messages (30 s each). */
const FORGOTTEN_MS = 10 * 60_000
/** Deleted accounts remembered at most (the oldest are let go first): deletions take a password each. */
const MAX_FORGOTTEN = 10_000

/**
 * The event handler that keeps every event naming an account in the activity store, then calls the host's onEvent,
 * and the store as the rest of the plugin sees it. A store failure is logged and never changes an answer or the host's
 * events. Events are kept in the background, so a deletion's own steps (its sessions ending) would land after the
 * account's records were forgotten: forget() waits for the account's records still on their way, and events naming it
 * from then on (a failed delivery of its goodbye) are not kept.
 */
export function keepActivity (store: ActivityStore, host: AuthEventHandler | undefined, log: FastifyBaseLogger): { onEvent: AuthEventHandler, activity: AccountActivity } {
  // Records on their way to the store, counted per account (no object per event or account: a Logout or a Login
  // keeps one), and what forget() waits on until its account's count is back to none.
  const inFlight = new Map<string, number>()
  const drained = new Map<string, Array<() => void>>()
  const forgotten = new Map<string, number>()

  function isForgotten (accountId: string): boolean {
    const until = forgotten.get(accountId)
    if (until === undefined) return false
    if (until > Date.now()) return true
    forgotten.delete(accountId)
    return false
  }

  // Not async: its promise and the await of the store's were one more promise and microtask turn per event kept.
  function keep (accountId: string, record: ActivityRecord): void {
    const add = activityAddAtOnce(store)
    if (add !== undefined) {
      // The memory store keeps it in this turn: nothing on its way for forget() to wait on.
      try {
        add(record)
      } catch (err) {
        failed(err)
      }
      return
    }
    inFlight.set(accountId, (inFlight.get(accountId) ?? 0) + 1)
    let adding: Promise<void>
    try {
      adding = Promise.resolve(store.add(record))
    } catch (err) {
      adding = Promise.reject(err)
    }
    adding.then(() => { landed(accountId) }, (err: unknown) => {
      failed(err)
      landed(accountId)
    })
  }

  function failed (err: unknown): void {
    log.error({ err: { message: (err as Error)?.message } }, 'fastify-password-auth: the activity store failed to keep an event')
  }

  function landed (accountId: string): void {
    const left = inFlight.get(accountId)! - 1
    if (left > 0) inFlight.set(accountId, left)
    else settled(accountId)
  }

  function settled (accountId: string): void {
    inFlight.delete(accountId)
    const waiting = drained.get(accountId)
    if (waiting === undefined) return
    drained.delete(accountId)
    for (const resolve of waiting) resolve()
  }

  return {
    onEvent (event) {
      const { accountId } = event as { accountId?: unknown }
      if (typeof accountId === 'string' && accountId !== '' && !NOT_KEPT.has(event.type) && !ROUTINE.has(event.type) && !isForgotten(accountId)) {
        keep(accountId, recordOf(event as AuthEvent & { accountId: string }))
      }
      return host?.(event)
    },
    activity: {
      list: async (accountId, limit) => await store.list(accountId, limit),
      async forget (accountId) {
        if (forgotten.size >= MAX_FORGOTTEN) forgotten.delete(forgotten.keys().next().value!)
        forgotten.set(accountId, Date.now() + FORGOTTEN_MS)
        if (inFlight.has(accountId)) {
          await new Promise<void>((resolve) => {
            const waiting = drained.get(accountId)
            if (waiting === undefined) drained.set(accountId, [resolve])
            else waiting.push(resolve)
          })
        }
        await store.forget(accountId)
      }
    }
  }
}
