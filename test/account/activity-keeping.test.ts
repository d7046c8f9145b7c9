import t from 'tap'
import { keepActivity } from '../../lib/account/activity.js'
import type { AuthEvent } from '../../lib/common/events.js'
import type { ActivityRecord, ActivityStore } from '../../lib/stores/types.js'
import { within } from '../helpers/within.js'

/** A store whose adds wait until released, or fail; it records what it was given. */
function heldStore (): ActivityStore & { added: ActivityRecord[], release: () => void, failNext: boolean } {
  let waiting: Array<() => void> = []
  const store = {
    added: [] as ActivityRecord[],
    failNext: false,
    release () { const now = waiting; waiting = []; for (const go of now) go() },
    async add (record: ActivityRecord) {
      if (store.failNext) {
        store.failNext = false
        throw new Error('store down')
      }
      await new Promise<void>((resolve) => { waiting.push(resolve) })
      store.added.push(record)
    },
    async list () { return [] },
    async forget (accountId: string) { store.added = store.added.filter((r) => r.accountId !== accountId) }
  }
  return store
}

const logger = (): { error: (obj: unknown, message: string) => void, errors: string[] } => {
  const errors: string[] = []
  return { errors, error: (_obj, message) => { errors.push(message) } }
}

const logout = (accountId: string, extra: Partial<AuthEvent> = {}): AuthEvent =>
  ({ type: 'logout', accountId, sessionId: 's1', tokenId: 'j1', time: 1000, requestId: 'req-1', ip: '10.0.0.1', ...extra }) as AuthEvent

t.test('a kept event: type, time, account, request and address beside its details, the rest in them; the host still gets it', async (t) => {
  const store = heldStore()
  const seen: AuthEvent[] = []
  const { onEvent } = keepActivity(store, (event) => { seen.push(event) }, logger() as never)
  await onEvent(logout('ada'))
  await onEvent({ type: 'session.started', accountId: 'ada', sessionId: 's2', time: 2000, requestId: undefined, ip: undefined })
  store.release()
  await new Promise((resolve) => setImmediate(resolve))
  t.same(store.added, [
    { type: 'logout', time: 1000, accountId: 'ada', requestId: 'req-1', ip: '10.0.0.1', details: { sessionId: 's1', tokenId: 'j1' } },
    { type: 'session.started', time: 2000, accountId: 'ada', details: { sessionId: 's2' } }
  ])
  t.notOk('requestId' in store.added[1]! || 'ip' in store.added[1]!, 'no undefined fields')
  t.equal(seen.length, 2)
})

t.test('forget() waits for the account\'s records still on their way, and keeps none of its events after it', async (t) => {
  const store = heldStore()
  const { onEvent, activity } = keepActivity(store, undefined, logger() as never)
  await onEvent(logout('ada'))
  await onEvent(logout('ada', { sessionId: 's2' }))
  await onEvent(logout('bob'))
  let forgotten = false
  const forgetting = activity.forget('ada').then(() => { forgotten = true })
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(forgotten, false, 'two of ada\'s records are still on their way')
  await onEvent(logout('ada', { sessionId: 's3' }))
  store.release()
  await within(2000, forgetting, 'forget() once the records landed')
  t.same(store.added.map((r) => r.accountId), ['bob'], 'ada\'s records landed before they were forgotten, and the later one was not kept')
  // An account with nothing on its way is forgotten at once.
  await within(2000, activity.forget('carol'), 'forget() with nothing on its way')
})

t.test('a store that fails: logged, never thrown at the emitter, and forget() is not left waiting', async (t) => {
  const store = heldStore()
  const log = logger()
  const { onEvent, activity } = keepActivity(store, undefined, log as never)
  store.failNext = true
  await onEvent(logout('ada'))
  await new Promise((resolve) => setImmediate(resolve))
  t.same(log.errors, ['fastify-password-auth: the activity store failed to keep an event'])
  await within(2000, activity.forget('ada'), 'forget() after a failed add')
  t.pass('forget() resolved')
})

t.test('a store whose add throws instead of rejecting: logged the same, and forget() is not left waiting', async (t) => {
  const log = logger()
  const store: ActivityStore = {
    add () { throw new Error('store down') },
    async list () { return [] },
    async forget () {}
  }
  const { onEvent, activity } = keepActivity(store, undefined, log as never)
  await onEvent(logout('ada'))
  await new Promise((resolve) => setImmediate(resolve))
  t.same(log.errors, ['fastify-password-auth: the activity store failed to keep an event'])
  await within(2000, activity.forget('ada'), 'forget() after a failed add')
  t.pass('forget() resolved')
})
