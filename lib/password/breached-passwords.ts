import { createHash } from 'node:crypto'
import type { BreachCheckFailure } from '../common/events.js'

/** Why a range lookup gave no answer: the service is slow, down, refused, said something else, or too many lookups wait. */
export type RangeFailure = BreachCheckFailure

export type RangeVerdict = { outcome: 'breached' | 'clean' } | { outcome: 'unavailable', reason: RangeFailure }

export interface RangeSettings {
  /** The address the 5-character prefix is appended to. */
  rangeUrl: string
  timeoutMs: number
  cacheTtlMs: number
  /** Prefixes kept at most (oldest first out); 0 keeps none. */
  cacheSize: number
  now?: () => number
}

/** A range answer with padding is about 40 KB; anything far above it is not one. */
const MAX_ANSWER_BYTES = 1024 * 1024
/** Lookups waiting for the service at once; beyond them the check is unavailable at once (a hung service holds no more sockets). */
const MAX_IN_FLIGHT = 64
const SUFFIX_LENGTH = 35
const LINE = /^([0-9A-F]{35}):(\d{1,12})$/i

class RangeLookupError extends Error {
  constructor (readonly reason: RangeFailure) { super(reason) }
}

/**
 * The breached suffixes of one prefix, sorted and packed into one string of 35-character entries (about
 * 35 bytes each), searched by bisection. Padding lines (count 0) are dropped: they are not breached.
 */
class SuffixSet {
  readonly #packed: string
  readonly #size: number

  constructor (suffixes: string[]) {
    suffixes.sort()
    this.#packed = suffixes.join('')
    this.#size = suffixes.length
  }

  has (suffix: string): boolean {
    let low = 0
    let high = this.#size - 1
    while (low <= high) {
      const middle = (low + high) >>> 1
      const entry = this.#packed.slice(middle * SUFFIX_LENGTH, (middle + 1) * SUFFIX_LENGTH)
      if (entry === suffix) return true
      if (entry < suffix) low = middle + 1
      else high = middle - 1
    }
    return false
  }
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
 * by prefix (never by password or full hash), at most `cacheSize` of them for `cacheTtlMs`; lookups of one
 * prefix in flight at once share one request. Whatever fails (timeout, network, status, garbage) is an
 * `unavailable` verdict, never an error: the caller decides what that means.
 */
export class RangeClient {
  readonly #settings: Required<RangeSettings>
  readonly #cache = new Map<string, { expiresAt: number, suffixes: SuffixSet }>()
  readonly #inFlight = new Map<string, Promise<SuffixSet>>()

  constructor (settings: RangeSettings) {
    this.#settings = { now: Date.now, ...settings }
  }

  async lookup (password: string): Promise<RangeVerdict> {
    const { prefix, suffix } = rangeKey(password)
    try {
      const suffixes = this.#cached(prefix) ?? await this.#fetchShared(prefix)
      return { outcome: suffixes.has(suffix) ? 'breached' : 'clean' }
    } catch (err) {
      return { outcome: 'unavailable', reason: err instanceof RangeLookupError ? err.reason : 'error' }
    }
  }

  #cached (prefix: string): SuffixSet | undefined {
    const entry = this.#cache.get(prefix)
    if (entry === undefined) return undefined
    if (entry.expiresAt > this.#settings.now()) return entry.suffixes
    this.#cache.delete(prefix)
    return undefined
  }

  async #fetchShared (prefix: string): Promise<SuffixSet> {
    const running = this.#inFlight.get(prefix)
    if (running !== undefined) return await running
    if (this.#inFlight.size >= MAX_IN_FLIGHT) throw new RangeLookupError('busy')
    const fetching = this.#fetch(prefix).finally(() => { this.#inFlight.delete(prefix) })
    this.#inFlight.set(prefix, fetching)
    const suffixes = await fetching
    this.#remember(prefix, suffixes)
    return suffixes
  }

  #remember (prefix: string, suffixes: SuffixSet): void {
    const { cacheSize, cacheTtlMs, now } = this.#settings
    if (cacheSize === 0) return
    this.#cache.delete(prefix)
    // A Map iterates in insertion order: the first key is the oldest answer.
    while (this.#cache.size >= cacheSize) this.#cache.delete(this.#cache.keys().next().value!)
    this.#cache.set(prefix, { expiresAt: now() + cacheTtlMs, suffixes })
  }

  /** One GET, the whole of it (connect, headers, body) within `timeoutMs`. */
  async #fetch (prefix: string): Promise<SuffixSet> {
    const controller = new AbortController()
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { controller.abort(); reject(new RangeLookupError('timeout')) }, this.#settings.timeoutMs)
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
