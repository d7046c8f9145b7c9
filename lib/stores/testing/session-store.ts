import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import type { NewSession, RotationResult, SessionPolicy, SessionStore } from '../types.js'
import { sleep, uniqueNamespace, type ContractCheck } from './check.js'

export interface SessionStoreHarness {
  /** A store over an empty namespace (table, key prefix…) of its own; two namespaces share nothing. */
  create: (namespace: string) => Promise<SessionStore>
}

/** Short lifetimes, so the checks can watch sessions idle out and expire. */
export const CONTRACT_SESSION_POLICY: Readonly<SessionPolicy> = Object.freeze({ idleMs: 700, maxMs: 1500, graceMs: 300 })

const policy = CONTRACT_SESSION_POLICY
/** Concurrent callers in the race checks. */
const RACERS = 20

function newSession (overrides: Partial<NewSession> = {}): NewSession {
  return {
    id: randomBytes(16).toString('base64url'),
    accountId: 'account-1',
    credentialVersion: 3,
    keyId: 'key-a',
    ip: '203.0.113.7',
    userAgent: 'Mozilla/5.0 (contract)',
    ...overrides
  }
}

function live (result: RotationResult, outcome: 'rotated' | 'grace', generation: number, message?: string) {
  assert.equal(result.outcome, outcome, message ?? `expected ${outcome}, got ${JSON.stringify(result)}`)
  const current = result as Extract<RotationResult, { outcome: 'rotated' | 'grace' }>
  assert.equal(current.generation, generation, 'generation')
  assert.equal(current.accountId, 'account-1')
  assert.equal(current.credentialVersion, 3)
  return current
}

function dead (result: RotationResult, outcomes: Array<RotationResult['outcome']>, message?: string): void {
  assert.ok(outcomes.includes(result.outcome), message ?? `expected ${outcomes.join(' or ')}, got ${JSON.stringify(result)}`)
}

function near (actual: number, expected: number, slackMs: number, what: string): void {
  assert.ok(actual <= expected && actual > expected - slackMs, `${what}: ${actual} ms, expected just under ${expected}`)
}

/**
 * The session store's promises (see SessionStore): live sessions, rotation with a grace answer, reuse
 * ending the session, atomic ends, idle and absolute limits, listing, isolation. The race checks run
 * many concurrent callers against one session.
 */
export function sessionStoreContract (harness: SessionStoreHarness): ContractCheck[] {
  const fresh = async (): Promise<SessionStore> => await harness.create(uniqueNamespace('sessions'))
  return [
    {
      name: 'a created session is live and listed with its details; an unknown one is not',
      async run () {
        const store = await fresh()
        const session = newSession()
        const times = await store.create(session, policy)
        near(times.expiresInMs, policy.idleMs, 300, 'expiresInMs')
        near(times.remainingMs, policy.maxMs, 300, 'remainingMs')
        assert.ok(Math.abs(times.createdAt - Date.now()) < 5000, 'createdAt is now (epoch ms)')
        const state = await store.get(session.id)
        assert.deepEqual({ ...state, mfa: state?.mfa === true }, { accountId: 'account-1', credentialVersion: 3, authenticatedAt: times.createdAt, mfa: false },
          'live, authenticated when it started, without a second factor')
        assert.equal(await store.get(newSession().id), null)
        const [listed, ...others] = await store.list('account-1')
        assert.equal(others.length, 0)
        assert.deepEqual({ ...listed, createdAt: 0, lastUsedAt: 0, authenticatedAt: 0, expiresAt: 0, trustedDevice: listed?.trustedDevice === true },
          { id: session.id, accountId: 'account-1', createdAt: 0, lastUsedAt: 0, authenticatedAt: 0, expiresAt: 0, ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (contract)', trustedDevice: false })
        assert.equal(listed!.createdAt, times.createdAt)
        assert.equal(listed!.authenticatedAt, times.createdAt)
        assert.equal(listed!.lastUsedAt, times.createdAt)
        near(listed!.expiresAt - times.createdAt, policy.idleMs + 1, 2, 'expiresAt')
        assert.deepEqual(await store.list('account-2'), [])
      }
    },
    {
      name: `reauthenticate moves authenticatedAt to now on a live session, also under ${RACERS} concurrent callers; never on an ended or unknown one`,
      async run () {
        const store = await fresh()
        const session = newSession()
        const { createdAt } = await store.create(session, policy)
        await sleep(20)
        const at = await store.reauthenticate(session.id)
        assert.ok(at !== null && at > createdAt && Math.abs(at - Date.now()) < 5000, `a time after the start, now: ${String(at)}`)
        assert.equal((await store.get(session.id))?.authenticatedAt, at)
        assert.equal((await store.list('account-1'))[0]?.authenticatedAt, at)
        const rotated = live(await store.rotate(session.id, 0, 'key-a', policy), 'rotated', 1)
        assert.equal(rotated.authenticatedAt, at, 'a rotation keeps it')
        assert.equal(rotated.createdAt, createdAt)
        const racing = await Promise.all(Array.from({ length: RACERS }, async () => await store.reauthenticate(session.id)))
        assert.ok(racing.every((value) => typeof value === 'number' && value >= at), JSON.stringify(racing))
        assert.equal((await store.list('account-1')).length, 1, 'still one session')
        assert.equal(await store.reauthenticate(newSession().id), null, 'unknown')
        await store.end(session.id, 'logout')
        assert.equal(await store.reauthenticate(session.id), null, 'ended')
        assert.equal(await store.get(session.id), null, 'and not revived')
      }
    },
    {
      name: 'a session records a second factor from its start or from a reauthenticate with one, keeps it through rotations, never loses it',
      async run () {
        const store = await fresh()
        const withMfa = newSession()
        await store.create({ ...withMfa, mfa: true }, policy)
        assert.equal((await store.get(withMfa.id))?.mfa, true)
        assert.equal(live(await store.rotate(withMfa.id, 0, 'key-a', policy), 'rotated', 1).mfa, true, 'a rotation keeps it')
        assert.notEqual(await store.reauthenticate(withMfa.id), null)
        assert.equal((await store.get(withMfa.id))?.mfa, true, 'a password-only reauthenticate does not clear it')
        const without = newSession()
        await store.create(without, policy)
        assert.equal((await store.get(without.id))?.mfa === true, false)
        assert.notEqual(await store.reauthenticate(without.id, true), null)
        assert.equal((await store.get(without.id))?.mfa, true, 'a reauthenticate with a second factor records it')
        assert.equal(live(await store.rotate(without.id, 0, 'key-a', policy), 'rotated', 1).mfa, true)
      }
    },
    {
      name: 'the current generation rotates; the replaced one gets the grace answer, unchanged',
      async run () {
        const store = await fresh()
        const session = newSession()
        const { createdAt } = await store.create(session, policy)
        const rotated = live(await store.rotate(session.id, 0, 'key-b', policy), 'rotated', 1)
        assert.equal(rotated.keyId, 'key-b')
        assert.equal(rotated.createdAt, createdAt)
        const again = live(await store.rotate(session.id, 0, 'key-c', policy), 'grace', 1, 'the replaced token within the grace period')
        assert.equal(again.keyId, 'key-b', 'the key of the token the rotation made')
        live(await store.rotate(session.id, 1, 'key-b', policy), 'rotated', 2, 'the current one still rotates')
        assert.notEqual(await store.get(session.id), null)
      }
    },
    {
      name: `of ${RACERS} concurrent rotations of one generation exactly one rotates, and all answers carry the same next generation`,
      async run () {
        const store = await fresh()
        const session = newSession()
        await store.create(session, policy)
        const results = await Promise.all(Array.from({ length: RACERS }, async () => await store.rotate(session.id, 0, 'key-b', policy)))
        assert.equal(results.filter((r) => r.outcome === 'rotated').length, 1, JSON.stringify(results.map((r) => r.outcome)))
        for (const result of results) assert.equal(live(result, result.outcome === 'rotated' ? 'rotated' : 'grace', 1).keyId, 'key-b')
        live(await store.rotate(session.id, 1, 'key-b', policy), 'rotated', 2)
      }
    },
    {
      name: 'a replaced refresh token presented after the grace period ends the session',
      async run () {
        const store = await fresh()
        const session = newSession()
        await store.create(session, policy)
        live(await store.rotate(session.id, 0, 'key-a', policy), 'rotated', 1)
        await sleep(policy.graceMs + 100)
        assert.deepEqual(await store.rotate(session.id, 0, 'key-a', policy), { outcome: 'reused', accountId: 'account-1' })
        assert.equal(await store.get(session.id), null)
        dead(await store.rotate(session.id, 1, 'key-a', policy), ['ended'], 'the current token died with the session')
        assert.deepEqual(await store.list('account-1'), [])
      }
    },
    {
      name: 'a token two or more rotations old ends the session, even within the grace period',
      async run () {
        const store = await fresh()
        const session = newSession()
        await store.create(session, policy)
        live(await store.rotate(session.id, 0, 'key-a', policy), 'rotated', 1)
        live(await store.rotate(session.id, 1, 'key-a', policy), 'rotated', 2)
        assert.equal((await store.rotate(session.id, 0, 'key-a', policy)).outcome, 'reused')
        assert.equal(await store.get(session.id), null)
      }
    },
    {
      name: 'a generation the store never issued ends the session',
      async run () {
        const store = await fresh()
        const session = newSession()
        await store.create(session, policy)
        assert.equal((await store.rotate(session.id, 5, 'key-a', policy)).outcome, 'reused')
        assert.equal(await store.get(session.id), null)
      }
    },
    {
      name: `of ${RACERS} concurrent ends of one session exactly one succeeds`,
      async run () {
        const store = await fresh()
        const session = newSession()
        await store.create(session, policy)
        const results = await Promise.all(Array.from({ length: RACERS }, async () => await store.end(session.id, 'logout')))
        assert.deepEqual(results.filter((r) => r !== null), ['account-1'])
        assert.equal(await store.get(session.id), null)
        assert.equal(await store.end(session.id, 'logout'), null, 'ending twice')
        dead(await store.rotate(session.id, 0, 'key-a', policy), ['ended'])
        assert.equal(await store.end(newSession().id, 'logout'), null, 'an unknown session')
      }
    },
    {
      name: 'endAll ends every live session of the account and no other, each exactly once under concurrency',
      async run () {
        const store = await fresh()
        const mine = Array.from({ length: 5 }, () => newSession())
        const theirs = newSession({ accountId: 'account-2' })
        for (const session of [...mine, theirs]) await store.create(session, policy)
        await store.end(mine[0]!.id, 'logout')
        const [all, ...singles] = await Promise.all([
          store.endAll('account-1', 'password_changed'),
          ...mine.map(async (session) => await store.end(session.id, 'ended_by_host'))
        ])
        const endedBySingles = singles.filter((r) => r !== null).length
        assert.equal((all as string[]).length + endedBySingles, 4, 'each live session ended once')
        assert.ok((all as string[]).every((id) => mine.some((session) => session.id === id)))
        for (const session of mine) assert.equal(await store.get(session.id), null)
        assert.notEqual(await store.get(theirs.id), null, 'another account keeps its session')
        assert.deepEqual(await store.endAll('account-1', 'password_changed'), [])
        assert.deepEqual(await store.list('account-1'), [])
        assert.equal((await store.list('account-2')).length, 1)
      }
    },
    {
      name: 'a session unused for idleMs ends; a rotation restarts the idle count',
      async run () {
        const store = await fresh()
        const used = newSession()
        const unused = newSession()
        await store.create(used, policy)
        await store.create(unused, policy)
        await sleep(policy.idleMs * 0.6)
        const rotated = live(await store.rotate(used.id, 0, 'key-a', policy), 'rotated', 1)
        near(rotated.expiresInMs, policy.idleMs, 300, 'the idle count restarted')
        await sleep(policy.idleMs * 0.6)
        assert.equal(await store.get(unused.id), null, 'idle for longer than idleMs')
        dead(await store.rotate(unused.id, 0, 'key-a', policy), ['idle', 'unknown'])
        assert.notEqual(await store.get(used.id), null, 'refreshed within idleMs')
        assert.deepEqual((await store.list('account-1')).map((s) => s.id), [used.id])
      }
    },
    {
      name: 'a session ends maxMs after it started, however often it rotates',
      async run () {
        const store = await fresh()
        const session = newSession()
        await store.create(session, policy)
        let generation = 0
        while (true) {
          await sleep(policy.idleMs / 2)
          const result = await store.rotate(session.id, generation, 'key-a', policy)
          if (result.outcome !== 'rotated') {
            dead(result, ['expired', 'unknown'])
            break
          }
          generation++
          assert.ok(result.expiresInMs <= result.remainingMs, 'never promised beyond the absolute end')
          assert.ok(generation < 10, 'the session should have expired')
        }
        assert.equal(await store.get(session.id), null)
      }
    },
    {
      name: 'stores in different namespaces share nothing',
      async run () {
        const first = await fresh()
        const second = await fresh()
        const session = newSession()
        await first.create(session, policy)
        assert.equal(await second.get(session.id), null)
        assert.equal(await second.end(session.id, 'logout'), null)
        assert.deepEqual(await second.endAll('account-1', 'password_changed'), [])
        assert.deepEqual(await second.list('account-1'), [])
        assert.notEqual(await first.get(session.id), null)
      }
    },
    {
      name: 'a session\'s amr comes back with every rotation, and reauthenticate() with one replaces it',
      async run () {
        const store = await fresh()
        const plain = newSession()
        await store.create(plain, policy)
        const rotated = await store.rotate(plain.id, 0, 'key-a', policy)
        assert.equal(rotated.outcome, 'rotated')
        assert.equal((rotated as { amr?: string[] }).amr, undefined, 'none unless given')
        const passkey = newSession({ mfa: true, amr: ['hwk', 'mfa'] })
        await store.create(passkey, policy)
        assert.deepEqual((await store.rotate(passkey.id, 0, 'key-a', policy) as { amr?: string[] }).amr, ['hwk', 'mfa'])
        assert.deepEqual((await store.rotate(passkey.id, 0, 'key-a', policy) as { amr?: string[] }).amr, ['hwk', 'mfa'], 'the grace answer too')
        assert.notEqual(await store.reauthenticate(passkey.id, true), null)
        assert.deepEqual((await store.rotate(passkey.id, 1, 'key-a', policy) as { amr?: string[] }).amr, ['hwk', 'mfa'], 'kept when none is given')
        assert.notEqual(await store.reauthenticate(plain.id, true, ['swk', 'mfa']), null)
        const stepped = await store.rotate(plain.id, 1, 'key-a', policy)
        assert.deepEqual((stepped as { amr?: string[] }).amr, ['swk', 'mfa'])
        assert.equal((stepped as { mfa?: boolean }).mfa, true)
      }
    },
    {
      name: 'forget (when the store has it) removes every session of the account, live and ended, and resolves the live ones',
      async run () {
        const store = await fresh()
        if (store.forget === undefined) return
        const [a, b, ended] = [newSession(), newSession(), newSession()]
        const other = newSession({ accountId: 'account-2' })
        for (const session of [a, b, ended, other]) await store.create(session, policy)
        await store.end(ended.id, 'logout')
        assert.deepEqual((await store.forget('account-1')).sort(), [a.id, b.id].sort())
        for (const session of [a, b, ended]) {
          assert.equal(await store.get(session.id), null)
          dead(await store.rotate(session.id, 0, 'key-b', policy), ['unknown', 'ended'])
        }
        assert.deepEqual(await store.list('account-1'), [])
        assert.deepEqual(await store.forget('account-1'), [])
        assert.notEqual(await store.get(other.id), null, 'another account keeps its session')
      }
    },
    {
      name: 'a session started from a trusted device is listed as one, with its second factor',
      async run () {
        const store = await fresh()
        const trusted = newSession({ mfa: true, trustedDevice: true })
        await store.create(trusted, policy)
        await store.create(newSession({ mfa: true }), policy)
        assert.equal((await store.get(trusted.id))?.mfa, true)
        const rotated = live(await store.rotate(trusted.id, 0, 'key-a', policy), 'rotated', 1)
        assert.equal(rotated.mfa, true)
        assert.equal(rotated.trustedDevice, true, 'a rotation says so, for the next access token\'s amr')
        const listed = await store.list('account-1')
        assert.deepEqual(listed.map((s) => [s.id === trusted.id, s.trustedDevice === true]).sort(), [[false, false], [true, true]])
      }
    }
  ]
}
