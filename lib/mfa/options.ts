import type { EmitEvent } from '../common/events.js'
import { assert, group, isInteger, isObject } from '../common/option-rules.js'
import { checkStore } from '../stores/check-store.js'
import { MemoryMfaStore } from '../stores/memory/mfa.js'
import { MemoryTrustedDeviceStore } from '../stores/memory/trusted-devices.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptStore, MfaStore, ThrottlePolicy, TrustedDeviceStore } from '../stores/types.js'
import type { TokenGuesses } from '../throttle/token-guesses.js'
import type { KeyRing } from '../tokens/key-ring.js'
import { SecondFactor } from './second-factor.js'
import { TrustedDevices } from './trusted-devices.js'

/** The plugin options mfa/ reads. */
export interface MfaPluginOptions {
  /**
   * Two factors (default false): TOTP and recovery codes, the routes LoginMfa and Mfa/Setup, Confirm,
   * RecoveryCodes, Disable. `true` or an object turns them on.
   */
  mfa?: boolean | MfaOptions
}

export interface MfaOptions {
  /** The name authenticator apps show (default the realm). */
  issuer?: string
  /** Seconds a Login's second-factor challenge (mfaToken) lives (default 300). */
  ttl?: number
  /** Second factors (sealed TOTP secrets, hashed recovery codes); default in memory (share one store between instances). */
  store?: MfaStore
  /**
   * Days a LoginMfa with `rememberDevice: true` trusts its device for the second factor: a Login from it with
   * the right password then needs no code (contract §21). Default 0: off. Fractions count to the second (1 s at least).
   */
  trustDays?: number
  /** Where trusted devices are kept (keyed hashes, never a device token); default in memory (share one store between instances). */
  trustedDevices?: TrustedDeviceStore
}

export const MFA_OPTION_KEYS = ['issuer', 'ttl', 'store', 'trustDays', 'trustedDevices']
const MAX_TRUST_DAYS = 400

/** Two factors, when on: the otpauth issuer, a challenge's lifetime, the store, and trusted devices (0 ms: off). */
export interface ResolvedMfa {
  issuer: string
  ttlMs: number
  store: MfaStore
  trustMs: number
  trustedDevices: TrustedDeviceStore
}

/** `realm`: the issuer unless `mfa.issuer` names another. */
export function resolveMfa ({ mfa = false }: MfaPluginOptions, realm: string): ResolvedMfa | undefined {
  assert(typeof mfa === 'boolean' || isObject(mfa), 'mfa must be true, false or { issuer, ttl, store, trustDays, trustedDevices }')
  if (mfa === false) return undefined
  const { issuer = realm, ttl = 300, store, trustDays = 0, trustedDevices }: MfaOptions = mfa === true ? {} : group(mfa, MFA_OPTION_KEYS, 'mfa')
  if (store !== undefined) checkStore('mfa.store', store)
  assert(isInteger(ttl, 1, 3600), 'mfa.ttl must be a whole number of seconds from 1 to 3600')
  assert(typeof issuer === 'string' && issuer.trim() !== '' && issuer.length <= 100 && !issuer.includes(':'),
    'mfa.issuer must be a name of 1 to 100 characters without ":" (authenticator apps show it)')
  const trustSeconds = Math.round(Number(trustDays) * 86_400)
  assert(typeof trustDays === 'number' && trustDays >= 0 && trustDays <= MAX_TRUST_DAYS && (trustDays === 0 || trustSeconds >= 1),
    `mfa.trustDays must be a number of days from 0 (off) to ${MAX_TRUST_DAYS}, and at least 1 second (1 / 86400) when not 0`)
  if (trustedDevices !== undefined) checkStore('mfa.trustedDevices', trustedDevices)
  return {
    issuer,
    ttlMs: ttl * 1000,
    store: store ?? new MemoryMfaStore(),
    trustMs: trustSeconds * 1000,
    trustedDevices: trustedDevices ?? new MemoryTrustedDeviceStore()
  }
}

interface Parts {
  attempts: AttemptStore
  /** What a login challenge's or reset link's codes are counted on. */
  tokenGuesses: TokenGuesses
  keyRing: KeyRing
  storeCall: StoreCall
  /** The password throttle's policy: its blocks follow a code counter's free failures too. */
  blocks: ThrottlePolicy
  emit: EmitEvent
}

/** Two factors, when on: the second factor, a login challenge's lifetime, and trusted devices when mfa.trustDays is set. */
export function createMfa (resolved: ResolvedMfa | undefined, { attempts, tokenGuesses, keyRing, storeCall, blocks, emit }: Parts):
{ secondFactor: SecondFactor, ttlMs: number, trustedDevices: TrustedDevices | undefined } | undefined {
  if (resolved === undefined) return undefined
  const { issuer, ttlMs, store, trustMs, trustedDevices } = resolved
  return {
    secondFactor: new SecondFactor({ store, attempts, tokenGuesses, keyRing, storeCall, issuer, throttle: blocks }),
    ttlMs,
    trustedDevices: trustMs === 0 ? undefined : new TrustedDevices({ store: trustedDevices, keyRing, storeCall, emit, ttlMs: trustMs })
  }
}
