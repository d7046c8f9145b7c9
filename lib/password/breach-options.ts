import type { FastifyRequest } from 'fastify'
import type { EmitEvent } from '../common/events.js'
import { assert, group, isInteger, isObject } from '../common/option-rules.js'
import { RangeClient, type RangeLookupKind } from './breached-passwords.js'

/**
 * A breached-password range service (contract §20), e.g. Have I Been Pwned's
 * `https://api.pwnedpasswords.com/range/` or a mirror of your own: new passwords it knows are refused
 * (reason `breached`), and a correct current password it knows answers 403 PASSWORD_RESET_REQUIRED.
 */
export interface BreachedPasswordsOptions {
  /** The address the 5 upper-case hex characters of the password's SHA-1 are appended to. */
  rangeUrl: string
  /** Milliseconds the whole lookup may take (default 1500); then the service counts as unavailable. */
  timeoutMs?: number
  /** Seconds an answer is kept, by prefix (default 86400). */
  cacheTtl?: number
  /**
   * Bytes of answers kept at most (default 33554432, 32 MiB): 18 bytes a breached suffix, about 17 KB a prefix
   * of Have I Been Pwned's; the oldest answer goes first, whatever a range service answers. 0 keeps none.
   */
  cacheBytes?: number
  /**
   * When the service is down, slow or answers garbage: `'allow'` (default) lets a new password through on
   * the rest of the policy (the built-in list included), `'refuse'` refuses it with 503. Login,
   * ChangePassword's current password and Reauthenticate go on either way. Both emit
   * `password.breach_check_unavailable`.
   */
  onUnavailable?: 'allow' | 'refuse'
}

export interface ResolvedBreachedPasswords {
  rangeUrl: string
  timeoutMs: number
  cacheTtlMs: number
  cacheBytes: number
  onUnavailable: 'allow' | 'refuse'
}

const KEYS = ['rangeUrl', 'timeoutMs', 'cacheTtl', 'cacheBytes', 'onUnavailable']
/** Options of earlier versions: the old name points at its successor. */
const RENAMED = { cacheSize: 'cacheBytes (the cache is bounded in bytes, not in prefixes)' }
const MAX_CACHE_BYTES = 1024 ** 3

/** Off (undefined) unless the host gives a range service. */
export function resolveBreachedPasswords (options: BreachedPasswordsOptions | false | undefined): ResolvedBreachedPasswords | undefined {
  if (options === undefined || options === false) return undefined
  if (isObject(options)) {
    for (const [before, now] of Object.entries(RENAMED)) assert(!Object.hasOwn(options, before), `unknown option breachedPasswords.${before}: did you mean breachedPasswords.${now}?`)
  }
  const { rangeUrl, timeoutMs = 1500, cacheTtl = 86_400, cacheBytes = 32 * 1024 ** 2, onUnavailable = 'allow' } = group(options, KEYS, 'breachedPasswords')
  assert(isRangeUrl(rangeUrl), 'breachedPasswords.rangeUrl must be an http(s) address without ? or #, e.g. https://api.pwnedpasswords.com/range/')
  // The prefix is appended as it is: without the /, https://api.pwnedpasswords.com/range would ask for …/rangeABCDE, a 404 every time.
  assert(rangeUrl.endsWith('/'), `breachedPasswords.rangeUrl must end with / (the 5 characters of the prefix are appended to it): did you mean ${rangeUrl}/?`)
  assert(isInteger(timeoutMs, 1, 60_000), 'breachedPasswords.timeoutMs must be a whole number of milliseconds from 1 to 60000')
  assert(isInteger(cacheTtl, 1, 30 * 86_400), 'breachedPasswords.cacheTtl must be a whole number of seconds from 1 to 2592000 (30 days)')
  assert(isInteger(cacheBytes, 0, MAX_CACHE_BYTES), `breachedPasswords.cacheBytes must be a whole number of bytes from 0 to ${MAX_CACHE_BYTES} (1 GiB)`)
  assert(onUnavailable === 'allow' || onUnavailable === 'refuse', 'breachedPasswords.onUnavailable must be \'allow\' or \'refuse\'')
  return { rangeUrl, timeoutMs, cacheTtlMs: cacheTtl * 1000, cacheBytes, onUnavailable }
}

function isRangeUrl (value: unknown): value is string {
  if (typeof value !== 'string' || /[?#\s]/.test(value)) return false
  try {
    const { protocol } = new URL(value + '00000')
    return protocol === 'https:' || protocol === 'http:'
  } catch {
    return false
  }
}

/** Which password a lookup is about: a new one (policy) or the current one, after it verified. */
export type CheckedPassword = RangeLookupKind

export interface BreachCheck {
  onUnavailable: 'allow' | 'refuse'
  /** The verdict for an NFC-normalised password; an unavailable service is reported here, as its event. */
  check (request: FastifyRequest, password: string, which: CheckedPassword, accountId?: string): Promise<'breached' | 'clean' | 'unavailable'>
}

export function createBreachCheck (resolved: ResolvedBreachedPasswords, emit: EmitEvent): BreachCheck {
  const client = new RangeClient(resolved)
  return {
    onUnavailable: resolved.onUnavailable,
    async check (request, password, which, accountId) {
      const verdict = await client.lookup(password, which)
      if (verdict.outcome !== 'unavailable') return verdict.outcome
      emit(request, { type: 'password.breach_check_unavailable', reason: verdict.reason, password: which, accountId })
      return 'unavailable'
    }
  }
}
