import type {
  NewSession, RotationResult, SessionEndReason, SessionInfo, SessionPolicy, SessionState, SessionStore, SessionTimes
} from '../types.js'
import { registerAtOnce } from '../at-once.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

interface Entry {
  readonly session: Readonly<NewSession>
  readonly createdAt: number
  /** The absolute end. */
  readonly endsAt: number
  lastUsedAt: number
  authenticatedAt: number
  mfa: boolean
  amr: string[] | undefined
  /** The idle limit: lastUsedAt + idleMs. */
  idleUntil: number
  generation: number
  keyId: string
  rotatedAt: number
  /** Kept as a tombstone until the session would have expired, so a late refresh learns why it fails. */
  ended: SessionEndReason | undefined
}

const SWEEP_INTERVAL_MS = 60_000

export interface MemorySessionStoreOptions {
  /** The clock, epoch milliseconds (default Date.now); tests move it to watch sessions expire. */
  now?: () => number
}

const OPTIONS: StoreOptionRules = { now: 'function' }

/**
 * Sessions in process memory, for a single instance. Entries, ended ones included, are dropped once
 * their idle or absolute limit has passed (swept at most once a minute), so memory is bounded by the
 * sessions started per idle period.
 */
export class MemorySessionStore implements SessionStore {
  readonly #entries = new Map<string, Entry>()
  readonly #byAccount = new Map<string, Set<string>>()
  readonly #now: () => number
  #nextSweep = 0

  constructor (options: MemorySessionStoreOptions = {}) {
    checkStoreOptions('MemorySessionStore', options, OPTIONS)
    const { now = Date.now } = options
    this.#now = now
    // The guard's read and Logout's end answer in the same turn (at-once.ts).
    registerAtOnce(this, 'get', MemorySessionStore.prototype.get, (sessionId: string) => this.#state(sessionId))
    registerAtOnce(this, 'end', MemorySessionStore.prototype.end, (sessionId: string, reason: SessionEndReason) => this.#end(sessionId, reason))
  }

  async create (session: NewSession, policy: SessionPolicy): Promise<SessionTimes> {
    const now = this.#now()
    if (now >= this.#nextSweep) this.#sweep(now)
    if (this.#entries.has(session.id)) throw new Error('A session with this id already exists')
    const entry: Entry = {
      session: Object.freeze({ ...session }),
      createdAt: now,
      endsAt: now + policy.maxMs,
      lastUsedAt: now,
      authenticatedAt: now,
      mfa: session.mfa === true,
      amr: session.amr === undefined ? undefined : [...session.amr],
      idleUntil: now + policy.idleMs,
      generation: 0,
      keyId: session.keyId,
      rotatedAt: now,
      ended: undefined
    }
    this.#entries.set(session.id, entry)
    let ids = this.#byAccount.get(session.accountId)
    if (ids === undefined) this.#byAccount.set(session.accountId, ids = new Set())
    ids.add(session.id)
    return times(entry, now)
  }

  async get (sessionId: string): Promise<SessionState | null> {
    return this.#state(sessionId)
  }

  #state (sessionId: string): SessionState | null {
    const entry = this.#entries.get(sessionId)
    if (entry === undefined || !isLive(entry, this.#now())) return null
    return { accountId: entry.session.accountId, credentialVersion: entry.session.credentialVersion, authenticatedAt: entry.authenticatedAt, mfa: entry.mfa }
  }

  async reauthenticate (sessionId: string, mfa = false, amr?: string[]): Promise<number | null> {
    const entry = this.#entries.get(sessionId)
    const now = this.#now()
    if (entry === undefined || !isLive(entry, now)) return null
    entry.authenticatedAt = now
    if (mfa) entry.mfa = true
    if (amr !== undefined) entry.amr = [...amr]
    return now
  }

  async rotate (sessionId: string, generation: number, keyId: string, policy: SessionPolicy): Promise<RotationResult> {
    const entry = this.#entries.get(sessionId)
    if (entry === undefined) return { outcome: 'unknown' }
    if (entry.ended !== undefined) return { outcome: 'ended' }
    const now = this.#now()
    if (now >= entry.endsAt) return { outcome: 'expired' }
    if (now >= entry.idleUntil) return { outcome: 'idle' }
    if (generation === entry.generation) {
      entry.generation++
      entry.keyId = keyId
      entry.rotatedAt = now
      entry.lastUsedAt = now
      entry.idleUntil = now + policy.idleMs
      return { outcome: 'rotated', ...this.#current(entry, now) }
    }
    if (generation === entry.generation - 1 && now - entry.rotatedAt <= policy.graceMs) {
      return { outcome: 'grace', ...this.#current(entry, now) }
    }
    entry.ended = 'refresh_token_reused'
    return { outcome: 'reused', accountId: entry.session.accountId }
  }

  async end (sessionId: string, reason: SessionEndReason): Promise<string | null> {
    return this.#end(sessionId, reason)
  }

  #end (sessionId: string, reason: SessionEndReason): string | null {
    const entry = this.#entries.get(sessionId)
    if (entry === undefined || !isLive(entry, this.#now())) return null
    entry.ended = reason
    return entry.session.accountId
  }

  async endAll (accountId: string, reason: SessionEndReason): Promise<string[]> {
    const ended: string[] = []
    for (const id of this.#byAccount.get(accountId) ?? []) {
      if (await this.end(id, reason) !== null) ended.push(id)
    }
    return ended
  }

  async forget (accountId: string): Promise<string[]> {
    const now = this.#now()
    const live: string[] = []
    for (const id of this.#byAccount.get(accountId) ?? []) {
      const entry = this.#entries.get(id)
      if (entry !== undefined && isLive(entry, now)) live.push(id)
      this.#entries.delete(id)
    }
    this.#byAccount.delete(accountId)
    return live
  }

  async list (accountId: string): Promise<SessionInfo[]> {
    const now = this.#now()
    const sessions: SessionInfo[] = []
    for (const id of this.#byAccount.get(accountId) ?? []) {
      const entry = this.#entries.get(id)!
      if (!isLive(entry, now)) continue
      const { ip, userAgent, trustedDevice = false } = entry.session
      sessions.push({ id, accountId, createdAt: entry.createdAt, lastUsedAt: entry.lastUsedAt, authenticatedAt: entry.authenticatedAt, expiresAt: expiresAt(entry), ip, userAgent, trustedDevice })
    }
    return sessions
  }

  /** Number of sessions held, ended ones included. */
  get size (): number {
    return this.#entries.size
  }

  #current (entry: Entry, now: number) {
    const { accountId, credentialVersion } = entry.session
    const current = {
      generation: entry.generation,
      keyId: entry.keyId,
      accountId,
      credentialVersion,
      authenticatedAt: entry.authenticatedAt,
      mfa: entry.mfa,
      trustedDevice: entry.session.trustedDevice === true,
      ...times(entry, now)
    }
    return entry.amr === undefined ? current : { ...current, amr: [...entry.amr] }
  }

  #sweep (now: number): void {
    this.#nextSweep = now + SWEEP_INTERVAL_MS
    for (const [id, entry] of this.#entries) {
      if (now < expiresAt(entry)) continue
      this.#entries.delete(id)
      const ids = this.#byAccount.get(entry.session.accountId)!
      ids.delete(id)
      if (ids.size === 0) this.#byAccount.delete(entry.session.accountId)
    }
  }
}

function expiresAt (entry: Entry): number {
  return Math.min(entry.idleUntil, entry.endsAt)
}

function isLive (entry: Entry, now: number): boolean {
  return entry.ended === undefined && now < expiresAt(entry)
}

function times (entry: Entry, now: number): SessionTimes {
  return { createdAt: entry.createdAt, expiresInMs: expiresAt(entry) - now, remainingMs: entry.endsAt - now }
}
