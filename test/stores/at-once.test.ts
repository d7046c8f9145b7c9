import t from 'tap'
import { MemoryAccountStore, MemoryActivityStore, MemorySessionStore } from '../../lib/index.js'
import { accountByIdAtOnce, activityAddAtOnce, sessionEndAtOnce, sessionGetAtOnce } from '../../lib/stores/at-once.js'

const POLICY = { idleMs: 60_000, maxMs: 3_600_000, graceMs: 0 }
const SESSION = { id: 's1', accountId: 'a1', credentialVersion: 0, keyId: 'k1', ip: '127.0.0.1', userAgent: 'test' }

t.test("the memory stores' reads answer at once, as their methods do", async (t) => {
  const sessions = new MemorySessionStore()
  await sessions.create(SESSION, POLICY)
  const get = sessionGetAtOnce(sessions)!
  t.type(get, 'function')
  t.same(get('s1'), await sessions.get('s1'), 'the same state as get()')
  t.equal(get('s2'), null)
  const end = sessionEndAtOnce(sessions)!
  t.equal(end('s1', 'logout'), 'a1', 'ends it and names its account, as end() does')
  t.equal(end('s1', 'logout'), null, 'a second end ends nothing')
  t.equal(await sessions.get('s1'), null, 'the session ended for every reader')

  const accounts = new MemoryAccountStore()
  const ada = accounts.add({ email: 'ada@example.com', passwordHash: 'h' })
  const findById = accountByIdAtOnce(accounts)!
  t.equal(findById(ada.id), await accounts.findById(ada.id), 'the same frozen view as findById()')
  t.notOk('passwordHash' in findById(ada.id)!, 'without the hash')
  t.equal(findById('nobody'), null)

  const activity = new MemoryActivityStore()
  const add = activityAddAtOnce(activity)!
  const time = Date.now()
  add({ type: 'logout', time, accountId: 'a1', details: { sessionId: 's1' } })
  t.match(await activity.list('a1', 10), [{ type: 'logout', time, accountId: 'a1', details: { sessionId: 's1' } }], 'kept, as add() keeps it')
})

t.test('a method replaced on the instance, overridden by a subclass, or behind a proxy is called as any store\'s', async (t) => {
  const sessions = new MemorySessionStore()
  t.type(sessionGetAtOnce(sessions), 'function')
  sessions.get = async () => null
  t.equal(sessionGetAtOnce(sessions), undefined, 'replaced get: no read at once')
  t.type(sessionEndAtOnce(sessions), 'function', 'end, untouched, still answers at once')

  class OwnEndSessions extends MemorySessionStore {
    override async end (sessionId: string, reason: 'logout'): Promise<string | null> {
      return await super.end(sessionId, reason)
    }
  }
  const own = new OwnEndSessions()
  t.equal(sessionEndAtOnce(own), undefined, "a subclass's own end")
  t.type(sessionGetAtOnce(own), 'function', 'the get it inherits')

  const accounts = new MemoryAccountStore()
  t.equal(accountByIdAtOnce(new Proxy(accounts, {})), undefined, 'a proxy is another object')
  t.equal(accountByIdAtOnce({ findById: accounts.findById }), undefined, 'another object with the same method')
  t.equal(sessionGetAtOnce(accounts), undefined, 'a method the store never registered')
})
