import { answerError } from './errors.js'
import type { SharedStore } from './shared-store.js'
import type { TokenAnswer } from './types.js'
import type { Wire } from './wire.js'

export type Mode = 'cookie' | 'token'
/** Why the session ended: a Logout (in any tab), or a Refresh the server refused (expired, ended elsewhere, or a reused refresh token). */
export type EndReason = 'logout' | 'refresh_refused'

/** The session as every tab of the origin shares it. The refresh token only in token mode: in cookie mode no script ever sees it. */
type Shared =
  | { signedIn: true, accessToken: string, expiresAt: number, lifetime: number, refreshToken?: string }
  | { signedIn: false, reason: EndReason }

export interface Keeper {
  /** A live access token: this tab's, the one another tab got, or a new one from one Refresh among all tabs; undefined when signed out. */
  token: () => Promise<string | undefined>
  /** After the server refused `stale`: a newer token (one Refresh among all tabs), or undefined when the session is over. */
  renew: (stale: string | undefined, force?: boolean) => Promise<string | undefined>
  /** Keeps a sign-in's answer and hands it to every tab. */
  start: (answer: TokenAnswer) => Promise<void>
  /** Ends the session in every tab. */
  end: (reason: EndReason) => Promise<void>
  deviceToken: () => Promise<string | undefined>
  onEnded: (listener: (reason: EndReason) => void) => () => void
  onStarted: (listener: () => void) => () => void
}

const SESSION = 'session'
const DEVICE = 'device'
const LEASE = 'refresh-lease'
/** Longer than a Refresh may take (the client's default timeout is 15 s). */
const LEASE_MS = 30_000

/**
 * One refresh for every tab: a tab that needs a token takes the origin's Web Lock, then reads the shared session.
 * If another tab refreshed meanwhile it adopts that token; otherwise it sends the one Refresh, writes the answer
 * where every tab reads it, and posts it on a BroadcastChannel for the tabs that wait for nothing. Without Web
 * Locks a lease in IndexedDB takes the lock's place (inLease); without BroadcastChannel a tab learns of a new or
 * ended session at its next call.
 */
export function createKeeper ({ wire, store, mode, name }: { wire: Wire, store: SharedStore, mode: Mode, name: string }): Keeper {
  let held: { accessToken: string, expiresAt: number, lifetime: number } | undefined
  /** Whether this tab was signed in, as far as it knows (undefined: not known yet), so each change is told once. */
  let signedIn: boolean | undefined
  let pending: Promise<string | undefined> | undefined
  const owner = `${Date.now().toString(36)}.${Math.random().toString(36).slice(2)}`
  const ended = new Set<(reason: EndReason) => void>()
  const started = new Set<() => void>()
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(name) : undefined

  function apply (shared: Shared): void {
    if (shared.signedIn) {
      held = { accessToken: shared.accessToken, expiresAt: shared.expiresAt, lifetime: shared.lifetime }
      if (signedIn !== true) { signedIn = true; for (const listener of started) listener() }
    } else {
      held = undefined
      const was = signedIn
      signedIn = false
      if (was === true) for (const listener of ended) listener(shared.reason)
    }
  }
  if (channel !== undefined) channel.onmessage = (event: MessageEvent<Shared>) => { apply(event.data) }

  async function publish (shared: Shared): Promise<void> {
    // Written (committed) before the lock is let go: the next tab in the lock reads it.
    await store.set(SESSION, shared)
    channel?.postMessage(shared)
    apply(shared)
  }

  // A token is treated as expired a little early (a tenth of its life, at most 5 s), so it does not expire on the way.
  const fresh = ({ expiresAt, lifetime }: { expiresAt: number, lifetime: number }): boolean => expiresAt - Math.min(5_000, lifetime / 10) > Date.now()

  async function sharedOf (answer: TokenAnswer, previousRefreshToken?: string): Promise<Shared> {
    if (mode === 'token' && answer.deviceToken !== undefined) await store.set(DEVICE, answer.deviceToken)
    const lifetime = answer.expiresIn * 1000
    const refreshToken = mode === 'token' ? answer.refreshToken ?? previousRefreshToken : undefined
    return { signedIn: true, accessToken: answer.accessToken, expiresAt: Date.now() + lifetime, lifetime, ...refreshToken === undefined ? {} : { refreshToken } }
  }

  async function renewInLock (stale: string | undefined, force: boolean): Promise<string | undefined> {
    const shared = await store.get<Shared>(SESSION)
    if (!force && shared?.signedIn === false) { apply(shared); return undefined }
    if (!force && shared?.signedIn === true && shared.accessToken !== stale && fresh(shared)) { apply(shared); return shared.accessToken }
    const refreshToken = shared?.signedIn === true ? shared.refreshToken : undefined
    if (mode === 'token' && refreshToken === undefined) { signedIn = false; held = undefined; return undefined }
    const response = await wire.send(wire.route('Refresh'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      credentials: 'include',
      body: JSON.stringify(mode === 'token' ? { refreshToken } : {})
    })
    if (response.ok) {
      const next = await sharedOf(await response.json() as TokenAnswer, refreshToken)
      await publish(next)
      return held?.accessToken
    }
    const error = await answerError(response)
    // The one answer for an expired, ended or reused refresh token: the session is over in every tab. Anything
    // else (503, 429, a proxy's 502) says nothing about the session: the caller hears it and it stays.
    if (error.code !== 'FST_PWAUTH_REFRESH_TOKEN_INVALID') throw error
    await publish({ signedIn: false, reason: 'refresh_refused' })
    return undefined
  }

  /**
   * Without Web Locks, tabs take turns through a lease in IndexedDB: each waits for the tab that refreshes, then finds
   * its token. Left to the grace answer alone, a tab whose Refresh arrives after two rotations would end the session
   * (reuse detection). A tab closed while holding the lease holds the others up to LEASE_MS.
   */
  async function inLease<T> (run: () => Promise<T>): Promise<T> {
    while (!await store.claim(LEASE, owner, LEASE_MS)) await new Promise((resolve) => setTimeout(resolve, 40 + Math.random() * 40))
    try {
      return await run()
    } finally {
      await store.release(LEASE, owner)
    }
  }

  async function renew (stale: string | undefined, force = false): Promise<string | undefined> {
    const locks = typeof navigator === 'undefined' ? undefined : navigator.locks
    const run = async (): Promise<string | undefined> => await renewInLock(stale, force)
    // One renewal at a time in this tab; the lock (or the lease standing in for it) makes it one among the tabs.
    pending ??= (async () => locks === undefined ? await inLease(run) : await locks.request(name, run))().finally(() => { pending = undefined })
    return await pending
  }

  return {
    async token () {
      if (held !== undefined && fresh(held)) return held.accessToken
      return await renew(held?.accessToken)
    },
    renew,
    async start (answer) { await publish(await sharedOf(answer)) },
    async end (reason) { await publish({ signedIn: false, reason }) },
    async deviceToken () { return mode === 'token' ? await store.get<string>(DEVICE) : undefined },
    onEnded (listener) { ended.add(listener); return () => { ended.delete(listener) } },
    onStarted (listener) { started.add(listener); return () => { started.delete(listener) } }
  }
}
