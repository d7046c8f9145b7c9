import { assert, group, isInteger, isObject } from '../common/option-rules.js'
import { checkStore } from '../stores/check-store.js'
import { MemoryMfaStore } from '../stores/memory/mfa.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptStore, MfaStore, ThrottlePolicy } from '../stores/types.js'
import type { TokenGuesses } from '../throttle/token-guesses.js'
import type { KeyRing } from '../tokens/key-ring.js'
import { SecondFactor } from './second-factor.js'

/** The plugin options mfa/ reads. */
export interface MfaPluginOptions {
  /**
   * Two factors (default false): TOTP and recovery codes, the routes LoginMfa and Mfa/Setup, Confirm,
   * RecoveryCodes, Disable. `issuer` is the name authenticator apps show (default the realm).
   */
  mfa?: boolean | { issuer?: string }
  /** Seconds a Login's second-factor challenge (mfaToken) lives (default 300). */
  mfaTtl?: number
  /** Second factors (sealed TOTP secrets, hashed recovery codes); default in memory (share one store between instances). */
  mfaStore?: MfaStore
}

/** Two factors, when on: the otpauth issuer, a challenge's lifetime, the store. */
export interface ResolvedMfa {
  issuer: string
  ttlMs: number
  store: MfaStore
}

/** `realm`: the issuer unless `mfa.issuer` names another. */
export function resolveMfa ({ mfa = false, mfaTtl = 300, mfaStore }: MfaPluginOptions, realm: string): ResolvedMfa | undefined {
  if (mfaStore !== undefined) checkStore('mfaStore', mfaStore)
  assert(typeof mfa === 'boolean' || isObject(mfa), 'mfa must be true, false or { issuer }')
  assert(isInteger(mfaTtl, 1, 3600), 'mfaTtl must be a whole number of seconds from 1 to 3600')
  if (mfa === false) return undefined
  const { issuer = realm } = mfa === true ? {} : group(mfa, ['issuer'], 'mfa')
  assert(typeof issuer === 'string' && issuer.trim() !== '' && issuer.length <= 100 && !issuer.includes(':'),
    'mfa.issuer must be a name of 1 to 100 characters without ":" (authenticator apps show it)')
  return { issuer, ttlMs: mfaTtl * 1000, store: mfaStore ?? new MemoryMfaStore() }
}

interface Parts {
  attempts: AttemptStore
  /** What a login challenge's or reset link's codes are counted on. */
  tokenGuesses: TokenGuesses
  keyRing: KeyRing
  storeCall: StoreCall
  /** The password throttle's policy: its blocks follow a code counter's free failures too. */
  blocks: ThrottlePolicy
}

/** Two factors, when on: the second factor and a login challenge's lifetime. */
export function createMfa (resolved: ResolvedMfa | undefined, { attempts, tokenGuesses, keyRing, storeCall, blocks }: Parts): { secondFactor: SecondFactor, ttlMs: number } | undefined {
  if (resolved === undefined) return undefined
  const { issuer, ttlMs, store } = resolved
  return { secondFactor: new SecondFactor({ store, attempts, tokenGuesses, keyRing, storeCall, issuer, throttle: blocks }), ttlMs }
}
