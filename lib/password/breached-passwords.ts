import { createHash } from 'node:crypto'
import type { BreachCheckFailure } from '../common/events.js'
import { RangeCache, SuffixSet } from './range-cache.js'
import { RangeLane } from './range-lane.js'

/** Why a range lookup gave no answer: the service is slow, down, refused, said something else, or too many lookups wait. */
export type RangeFailure = BreachCheckFailure

export type RangeVerdict = { outcome: 'breached' | 'clean' } | { outcome: 'unavailable', reason: RangeFailure }

/** Which password a lookup is about: a new one (anyone can have one looked up, by Register) or a current one, after it verified. */
export type RangeLookupKind = 'new' | 'current'

export interface RangeSettings {
  /** The address the 5-character prefix is appended to. */
  rangeUrl: string
  timeoutMs: number
  cacheTtlMs: number
  /** The bytes of answers kept at most (RangeCache); 0 keeps none. */
  cacheBytes: number
  now?: () => number
}

/** A range answer with padding is about 40 KB; anything far above it is not one. */
const MAX_ANSWER_BYTES = 1024 * 1024
/**
 * Requests for new passwords' prefixes in flight at once; beyond them a new password's lookup is unavailable at
 * once (busy): a hung service holds no more sockets, and strangers' Registers hold no more than these.
 */
const NEW_PASSWORD_FETCHES = 64
/**
 * Requests for current passwords' prefixes in flight at once: a lane of their own, which new passwords never take,
 * so no stranger can make a verified password's lookup unavailable. Beyond it a lookup waits for its turn, within its timeout.
 */
const CURRENT_PASSWORD_FETCHES = 64
const LINE = /^([0-9A-F]{35}):(\d{1,12})$/i

class RangeLookupError extends Error {
  constructor (readonly reason: RangeFailure) { super(reason) }
}

/** `SUFFIX:COUNT` lines; anything else in the answer makes it garbage. An empty answer is none a range service gives. */
export function parseRange (text: string): SuffixSet {
  const breached: string[] = []
  let lines = 0
  for (const line of text.split('\n')) {
    const trimmed = line.trim()
    if (trimmed === '') continue
    const match = LINE.exec(trimmed)
    if (match === null) throw new RangeLookupError('garbage')
    lines++
    if (Number(match[2]) > 0) breached.push(match[1]!.toUpperCase())
  }
  if (lines === 0) throw new RangeLookupError('garbage')
  return new SuffixSet(breached)
}

/** The upper-case hex SHA-1 of the password's UTF-8 bytes, split where the k-anonymity range splits it. */
export function rangeKey (password: string): { prefix: string, suffix: string } {
  const hash = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase()
  return { prefix: hash.slice(0, 5), suffix: hash.slice(5) }
}

/**
 * The k-anonymity range lookup (contract §20): only the first 5 hex characters of the password's SHA-1
 * leave the process, with `Add-Padding: true` so the answer's size says nothing either. Answers are cached
 * by prefix (never by password or full hash), at most `cacheBytes` of them for `cacheTtlMs`; lookups of one
 * prefix in flight at once share one request. Whatever fails (timeout, network, status, garbage) is an
 * `unavailable` verdict, never an error: the caller decides what that means. A lookup, its wait for a place
 * included, takes at most `timeoutMs`.
 */
export class RangeClient {
  readonly #settings: Required<RangeSettings>
  readonly #cache: RangeCache
  readonly #inFlight = new Map<string, Promise<SuffixSet>>()
  readonly #lanes: Record<RangeLookupKind, RangeLane> = { new: new RangeLane(NEW_PASSWORD_FETCHES), current: new RangeLane(CURRENT_PASSWORD_FETCHES) }

  constructor (settings: RangeSettings) {
    this.#settings = { now: Date.now, ...settings }
    this.#cache = new RangeCache({ maxBytes: settings.cacheBytes, ttlMs: settings.cacheTtlMs, now: this.#settings.now })
  }

  /** The bytes of the answers cached now. */
  get cachedBytes (): number {
    return this.#cache.bytes
  }

  async lookup (password: string, kind: RangeLookupKind = 'new'): Promise<RangeVerdict> {
    const deadline = performance.now() + this.#settings.timeoutMs
    const { prefix, suffix } = rangeKey(password)
    try {
      const suffixes = this.#cache.get(prefix) ?? await this.#fetchShared(prefix, kind, deadline)
      return { outcome: suffixes.has(suffix) ? 'breached' : 'clean' }
    } catch (err) {
      return { outcome: 'unavailable', reason: err instanceof RangeLookupError ? err.reason : 'error' }
    }
  }

  async #fetchShared (prefix: string, kind: RangeLookupKind, deadline: number): Promise<SuffixSet> {
    const running = this.#inFlight.get(prefix)
    if (running !== undefined) return await running
    const lane = this.#lanes[kind]
    // A new password gives up at once (anyone can start those); a current one waits for its turn.
    if (!(kind === 'new' ? lane.tryTake() : await lane.take(deadline - performance.now()))) throw new RangeLookupError('busy')
    // While it waited, the prefix may have come in, or another lookup may have started asking for it.
    const known = this.#cache.get(prefix) ?? this.#inFlight.get(prefix)
    if (known !== undefined) {
      lane.release()
      return await known
    }
    const fetching = this.#fetch(prefix, deadline - performance.now())
      .then((suffixes) => { this.#cache.set(prefix, suffixes); return suffixes })
      .finally(() => { this.#inFlight.delete(prefix); lane.release() })
    this.#inFlight.set(prefix, fetching)
    return await fetching
  }

  /** One GET, the whole of it (connect, headers, body) within `timeoutMs`. */
  async #fetch (prefix: string, timeoutMs: number): Promise<SuffixSet> {
    const controller = new AbortController()
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { controller.abort(); reject(new RangeLookupError('timeout')) }, Math.max(1, timeoutMs))
    })
    const request = (async () => {
      const response = await fetch(this.#settings.rangeUrl + prefix, {
        headers: { 'Add-Padding': 'true', accept: 'text/plain' },
        redirect: 'error',
        signal: controller.signal
      })
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => {})
        throw new RangeLookupError('status')
      }
      return parseRange(await readLimited(response))
    })()
    try {
      return await Promise.race([request, deadline])
    } finally {
      clearTimeout(timer)
      // The loser of the race must not become an unhandled rejection.
      request.catch(() => {})
    }
  }
}

/** The body of a 200 (never null: only 204, 205 and 304 have none), up to MAX_ANSWER_BYTES. */
async function readLimited (response: Response): Promise<string> {
  const reader = response.body!.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => {})
      throw new RangeLookupError('garbage')
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}
