import type { FastifyRequest } from 'fastify'
import { assert, checkKnownKeys, group, isInteger, isObject, PLUGIN_NAME } from '../common/option-rules.js'
import type { SecureCookie } from '../http/secure-cookie.js'
import { checkStore } from '../stores/check-store.js'
import { MemoryAttemptStore } from '../stores/memory/attempts.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AccountReads } from '../stores/account-reads.js'
import type { AttemptStore, ThrottlePolicy } from '../stores/types.js'
import type { KeyRing } from '../tokens/key-ring.js'
import { AttemptThrottle } from './attempt-throttle.js'
import { DeviceTokens } from './device-tokens.js'
import { createKnownDevices, type KnownDevices } from './known-devices.js'
import { TokenGuesses } from './token-guesses.js'

/** The plugin options throttle/ reads. */
export interface ThrottlePluginOptions {
  /** Per-e-mail attempt counters; default in memory (share one store between instances). */
  attempts?: AttemptStore
  throttle?: ThrottleOptions
  /** Per-IP limit (default 100 per minute); `false` turns it off. */
  rateLimit?: RateLimitOptions | false
}

export interface ThrottleOptions {
  /** Consecutive failures per e-mail before it is blocked (default 5). */
  freeFailures?: number
  /** First block in seconds (default 30), doubling with each further failure. */
  blockSeconds?: number
  /** Longest block in seconds (default 900). */
  maxBlockSeconds?: number
  /** Failures are forgotten this long after the last one or the end of the block (default 86400). */
  forgetAfterSeconds?: number
  /**
   * Seconds a device token from Login stays good (default 15552000, 180 days). A request carrying one for
   * its e-mail is judged on that device's own counter, so strangers blocking the address do not lock the owner out.
   */
  deviceTtl?: number
}

export const THROTTLE_OPTION_KEYS = ['freeFailures', 'blockSeconds', 'maxBlockSeconds', 'forgetAfterSeconds', 'deviceTtl']

/**
 * One budget per client IP, applied with @fastify/rate-limit, spent by every route that takes a password, a code, a
 * token or a passkey, or stores a challenge (routes/index.ts registers it once around them; the README lists them).
 */
export interface RateLimitOptions {
  /** Requests per window and IP address (default 100). */
  max?: number
  /** Milliseconds, or a string such as '1 minute' (default 60000). */
  timeWindow?: number | string
  /** An ioredis client, so that all instances share the counters. */
  redis?: object
  /** Key prefix in Redis (default 'fastify-password-auth:rate-limit:'). */
  nameSpace?: string
  /** What a client is (default its IP address, IPv6 by /64 subnet). */
  keyGenerator?: (request: FastifyRequest) => string | number | Promise<string | number>
  allowList?: string[] | ((request: FastifyRequest, key: string) => boolean | Promise<boolean>)
  ipv6Subnet?: number
}

export interface ResolvedThrottle {
  /** Every counter of the plugin: passwords, second-factor codes, messages. */
  attempts: AttemptStore
  /** The password counters' policy; leaseMs comes from the password options (password/attempt-lease.ts). */
  policy: Omit<ThrottlePolicy, 'leaseMs'>
  /** Seconds a device token lasts (throttle.deviceTtl). */
  deviceTtl: number
  rateLimit: RateLimitOptions | false
}

export function resolveThrottle ({ attempts, throttle, rateLimit }: ThrottlePluginOptions): ResolvedThrottle {
  if (attempts !== undefined) checkStore('attempts', attempts)
  const {
    freeFailures = 5, blockSeconds = 30, maxBlockSeconds = 900, forgetAfterSeconds = 86_400, deviceTtl = 15_552_000
  } = group(throttle, THROTTLE_OPTION_KEYS, 'throttle')
  assert(isInteger(freeFailures, 1, 1000), 'throttle.freeFailures must be a whole number from 1 to 1000')
  assert(isInteger(blockSeconds, 1), 'throttle.blockSeconds must be a whole number of seconds, at least 1')
  assert(isInteger(maxBlockSeconds, blockSeconds), 'throttle.maxBlockSeconds must be a whole number of seconds, at least blockSeconds')
  assert(isInteger(forgetAfterSeconds, 1), 'throttle.forgetAfterSeconds must be a whole number of seconds, at least 1')
  assert(isInteger(deviceTtl, 1, 400 * 86_400), 'throttle.deviceTtl must be a whole number of seconds from 1 to 34560000 (400 days)')
  return {
    attempts: attempts ?? new MemoryAttemptStore(),
    policy: { freeFailures, blockMs: blockSeconds * 1000, maxBlockMs: maxBlockSeconds * 1000, forgetAfterMs: forgetAfterSeconds * 1000 },
    deviceTtl,
    rateLimit: resolveRateLimit(rateLimit)
  }
}

const RATE_LIMIT_OPTION_KEYS = ['max', 'timeWindow', 'redis', 'nameSpace', 'keyGenerator', 'allowList', 'ipv6Subnet']

function resolveRateLimit (rateLimit: RateLimitOptions | false = {}): RateLimitOptions | false {
  assert(rateLimit === false || isObject(rateLimit), 'rateLimit must be an object or false')
  if (rateLimit === false) return false
  checkKnownKeys(rateLimit, RATE_LIMIT_OPTION_KEYS, 'rateLimit')
  return { max: 100, timeWindow: 60_000, nameSpace: `${PLUGIN_NAME}:rate-limit:`, ...rateLimit }
}

interface Parts {
  /** How long an unsettled password attempt counts (password/attempt-lease.ts). */
  leaseMs: number
  keyRing: KeyRing
  storeCall: StoreCall
  /** Cookie mode's device cookie. */
  deviceCookie: SecureCookie | undefined
  /** Where a device token's account is read: a password change or reset ends the tokens minted before it. */
  accounts: AccountReads
}

/** The attempt store every counter shares, the password throttle, the known devices it trusts, and the guesses one-time tokens take. */
export function createThrottle ({ attempts, policy, deviceTtl }: ResolvedThrottle, { leaseMs, keyRing, storeCall, deviceCookie, accounts }: Parts):
{ attempts: AttemptStore, attemptThrottle: AttemptThrottle, knownDevices: KnownDevices, tokenGuesses: TokenGuesses } {
  return {
    attempts,
    attemptThrottle: new AttemptThrottle(attempts, { ...policy, leaseMs }, storeCall, keyRing),
    knownDevices: createKnownDevices(new DeviceTokens(keyRing, deviceTtl), deviceCookie, accounts),
    tokenGuesses: new TokenGuesses(attempts, storeCall)
  }
}
