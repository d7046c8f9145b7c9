import type { FastifyRequest } from 'fastify'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptStore, MfaStore, PasswordAuthAccount, StoredMfa, ThrottlePolicy } from '../stores/types.js'
import { reserveAttempt, retryAfterSeconds } from '../throttle/reserve-attempt.js'
import type { KeyRing } from '../tokens/key-ring.js'
import { RecoveryCodes } from './recovery-codes.js'
import { SecretBox } from './secret-box.js'
import { newTotpSecret, otpauthUrl, totpStep } from './totp.js'

/** Second-factor failures allowed per account before its blocks start (contract §15). */
export const FREE_CODE_FAILURES = 10
/** Wrong codes a login challenge or a reset token survives. */
export const CODES_PER_TOKEN = 5

const TOTP_CODE = /^\d{6}$/

/** A token's wrong codes: after the 5th its key stays blocked for longer than any token lives (a day). */
const DAY_MS = 86_400_000
const TOKEN_POLICY: ThrottlePolicy = Object.freeze({ freeFailures: CODES_PER_TOKEN, blockMs: DAY_MS, maxBlockMs: DAY_MS, leaseMs: 10_000, forgetAfterMs: DAY_MS })

/** A code check, as every caller switches on it. `throttled`: the account's code counter is blocked (429). */
export type CodeCheck = { outcome: 'accepted' } | { outcome: 'rejected' } | { outcome: 'throttled', retryAfter: number }

/**
 * check()'s answer. `off`: the account has two factors off, nothing was checked. `spent`: a wrong code that
 * was the one-time token's 5th (the caller kills the token).
 */
export type SecondFactorCheck = CodeCheck | { outcome: 'off' } | { outcome: 'spent' }

/** confirm()'s answer. `no_setup`: nothing pending (or two factors already on). */
export type ConfirmCheck = { outcome: 'accepted', recoveryCodes: string[] } | { outcome: 'no_setup' } | Exclude<CodeCheck, { outcome: 'accepted' }>

const ACCEPTED = Object.freeze({ outcome: 'accepted' } as const)
const REJECTED = Object.freeze({ outcome: 'rejected' } as const)

export interface SecondFactorOptions {
  store: MfaStore
  attempts: AttemptStore
  keyRing: KeyRing
  storeCall: StoreCall
  /** The blocks after the free failures, as the password throttle has them (contract §6). */
  throttle: Omit<ThrottlePolicy, 'freeFailures'>
  /** The `issuer` of the otpauth URI: the name authenticator apps show. */
  issuer: string
}

/**
 * TOTP and recovery codes (contract §15). Codes are checked on a per-account counter of their own (10 free
 * failures, then the password throttle's blocks), never the password's. A TOTP step is accepted once per
 * account (the store advances the last step by compare-and-set), a recovery code once (the store removes it).
 */
export class SecondFactor {
  readonly #store: MfaStore
  readonly #attempts: AttemptStore
  readonly #storeCall: StoreCall
  readonly #policy: ThrottlePolicy
  readonly #box: SecretBox
  readonly #recoveryCodes: RecoveryCodes
  readonly #issuer: string

  constructor ({ store, attempts, keyRing, storeCall, throttle, issuer }: SecondFactorOptions) {
    this.#store = store
    this.#attempts = attempts
    this.#storeCall = storeCall
    this.#policy = Object.freeze({ ...throttle, freeFailures: FREE_CODE_FAILURES })
    this.#box = new SecretBox(keyRing)
    this.#recoveryCodes = new RecoveryCodes(keyRing)
    this.#issuer = issuer
  }

  /** Whether the account has two factors on. */
  async isOn (request: FastifyRequest, accountId: string): Promise<boolean> {
    return (await this.#get(request, accountId))?.enabled === true
  }

  /** Whether two factors are on, and how many recovery codes are left unused. */
  async status (request: FastifyRequest, accountId: string): Promise<{ enabled: boolean, recoveryCodesLeft: number }> {
    const record = await this.#get(request, accountId)
    return record?.enabled === true ? { enabled: true, recoveryCodesLeft: record.recoveryCodes.length } : { enabled: false, recoveryCodesLeft: 0 }
  }

  /** A new pending set-up (replacing a pending one); null if two factors are already on. */
  async setup (request: FastifyRequest, account: PasswordAuthAccount): Promise<{ secret: string, otpauthUrl: string } | null> {
    const secret = newTotpSecret()
    const sealed = this.#box.seal(account.id, secret)
    const begun = await this.#storeCall(request.log, 'mfa.begin', () => this.#store.begin(account.id, sealed))
    return begun ? { secret, otpauthUrl: otpauthUrl(this.#issuer, account.email, secret) } : null
  }

  /**
   * Turns the pending set-up on with a current code for its secret; accepted, it carries the recovery codes
   * to show once. The code's step is recorded, so it cannot log in.
   */
  async confirm (request: FastifyRequest, accountId: string, code: string): Promise<ConfirmCheck> {
    return await this.#counted(request, accountId, async (): Promise<ConfirmCheck> => {
      const record = await this.#get(request, accountId)
      if (record === null || record.enabled) return { outcome: 'no_setup' }
      const secret = this.#box.open(accountId, record.secret)
      const step = secret === null || !TOTP_CODE.test(code) ? null : totpStep(secret, code, 0)
      if (step === null) return REJECTED
      const { codes, hashes } = this.#recoveryCodes.generate(accountId)
      const enabled = await this.#storeCall(request.log, 'mfa.enable', () => this.#store.enable(accountId, record.secret, step, hashes))
      return enabled ? { outcome: 'accepted', recoveryCodes: codes } : { outcome: 'no_setup' }
    })
  }

  /**
   * Checks a code: a TOTP code, or (`recovery`, the default) a recovery code, each usable once. `off` when
   * the account has two factors off (nothing counted); with them on, a missing code is `rejected` without
   * counting. A code sent with a one-time token (a login challenge, a reset link) is counted under its
   * `tokenKey` too: `spent` once the token has had its 5 wrong codes, and the caller kills the token.
   */
  async check (request: FastifyRequest, accountId: string, code: string | undefined, { recovery = true, tokenKey }: { recovery?: boolean, tokenKey?: string } = {}):
  Promise<SecondFactorCheck> {
    const record = await this.#get(request, accountId)
    if (record === null || !record.enabled) return { outcome: 'off' }
    if (code === undefined) return REJECTED
    const token = tokenKey === undefined ? undefined : await reserveAttempt(this.#attempts, this.#storeCall, request.log, tokenKey, TOKEN_POLICY)
    // Spent (the token was killed at its 5th wrong code), or as many codes in flight as it has left.
    if (token !== undefined && !('settle' in token)) return REJECTED
    let result: CodeCheck
    try {
      result = await this.#counted(request, accountId, async () => await this.#verify(request, accountId, record, code, recovery))
    } catch (err) {
      await token?.settle('cancel').catch(() => {})
      throw err
    }
    const blockMs = await token?.settle(result.outcome === 'rejected' ? 'failure' : result.outcome === 'accepted' ? 'success' : 'cancel') ?? 0
    return result.outcome === 'rejected' && blockMs > 0 ? { outcome: 'spent' } : result
  }

  /** A TOTP code above the last accepted step (which the store then advances), or an unused recovery code. */
  async #verify (request: FastifyRequest, accountId: string, record: StoredMfa, code: string, recovery: boolean): Promise<CodeCheck> {
    const typed = code.replace(/\s/g, '')
    if (TOTP_CODE.test(typed)) {
      const secret = this.#box.open(accountId, record.secret)
      const step = secret === null ? null : totpStep(secret, typed, record.lastStep)
      const accepted = step !== null && await this.#storeCall(request.log, 'mfa.acceptStep', () => this.#store.acceptStep(accountId, step))
      return accepted ? ACCEPTED : REJECTED
    }
    const hashes = recovery ? this.#recoveryCodes.candidates(accountId, typed) : []
    if (hashes.length === 0) return REJECTED
    const used = await this.#storeCall(request.log, 'mfa.useRecoveryCode', () => this.#store.useRecoveryCode(accountId, hashes))
    return used ? ACCEPTED : REJECTED
  }

  /** Ten new recovery codes replacing the old ones; null if two factors are off. */
  async replaceRecoveryCodes (request: FastifyRequest, accountId: string): Promise<string[] | null> {
    const { codes, hashes } = this.#recoveryCodes.generate(accountId)
    const replaced = await this.#storeCall(request.log, 'mfa.replaceRecoveryCodes', () => this.#store.replaceRecoveryCodes(accountId, hashes))
    return replaced ? codes : null
  }

  /** Turns two factors off; false if they were not on. */
  async disable (request: FastifyRequest, accountId: string): Promise<boolean> {
    return await this.#storeCall(request.log, 'mfa.disable', () => this.#store.disable(accountId))
  }

  /**
   * Runs one code check on the account's counter: reserved first (a blocked account gets `throttled`), then
   * settled as a success (`accepted`) or a failure (`rejected`); anything else (a store failure, `no_setup`)
   * counts neither way.
   */
  async #counted<T extends { outcome: string }> (request: FastifyRequest, accountId: string, run: () => Promise<T>): Promise<T | { outcome: 'throttled', retryAfter: number }> {
    const attempt = await reserveAttempt(this.#attempts, this.#storeCall, request.log, `mfa.${accountId}`, this.#policy)
    if (!('settle' in attempt)) return { outcome: 'throttled', retryAfter: retryAfterSeconds(attempt.retryAfterMs) }
    let result
    try {
      result = await run()
    } catch (err) {
      await attempt.settle('cancel').catch(() => {})
      throw err
    }
    await attempt.settle(result.outcome === 'rejected' ? 'failure' : result.outcome === 'accepted' ? 'success' : 'cancel')
    return result
  }

  async #get (request: FastifyRequest, accountId: string) {
    return await this.#storeCall(request.log, 'mfa.get', () => this.#store.get(accountId))
  }
}
