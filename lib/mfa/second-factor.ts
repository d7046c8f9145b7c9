import { createHash } from 'node:crypto'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptStore, MfaStore, PasswordAuthAccount, StoredMfa, ThrottlePolicy } from '../stores/types.js'
import { forgetCounter, outcomeOfCheck, runCounted, settleSuccess } from '../throttle/counted.js'
import { COUNTER_KEYS } from '../throttle/counter-keys.js'
import { reserveAttempt, reserveInTurn, retryAfterSeconds } from '../throttle/reserve-attempt.js'
import type { TokenGuesses } from '../throttle/token-guesses.js'
import type { KeyRing } from '../tokens/key-ring.js'
import { RecoveryCodes } from './recovery-codes.js'
import { SecretBox } from './secret-box.js'
import { newTotpSecret, otpauthUrl, totpStep } from './totp.js'

/** Second-factor failures allowed per code counter before its blocks start (contract §15). */
export const FREE_CODE_FAILURES = 10
/**
 * Failures in a row after which a code counter accepts nothing until the password is reset (NIST 800-63B-4
 * §3.2.2): the blocks alone would let a guesser with the password try about 96 codes a day, forever.
 */
export const CODE_FAILURES_BEFORE_LOCK = 100
/** How long a locked counter stays locked if no reset comes: longer than anyone waits. */
const LOCK_MS = 400 * 86_400_000

const TOTP_CODE = /^\d{6}$/

/** A code check, as every caller switches on it. `throttled`: the code counter is blocked or locked (429). */
export type CodeCheck = { outcome: 'accepted' } | { outcome: 'rejected' } | { outcome: 'throttled', retryAfter: number }

/**
 * check()'s answer. `accepted` carries the enrolment the code belongs to (see enrolment()). `off`: the
 * account has two factors off, nothing was checked. `missing`: they are on and no code came (nothing
 * counted). `spent`: a wrong code that was the one-time token's 5th (the caller kills the token).
 */
export type SecondFactorCheck =
  | { outcome: 'accepted', enrolment: string }
  | Exclude<CodeCheck, { outcome: 'accepted' }>
  | { outcome: 'off' } | { outcome: 'missing' } | { outcome: 'spent' }

/** confirm()'s answer. `no_setup`: nothing pending (or two factors already on). */
export type ConfirmCheck = { outcome: 'accepted', recoveryCodes: string[] } | { outcome: 'no_setup' } | Exclude<CodeCheck, { outcome: 'accepted' }>

/** Where a code counts (contract §15). */
export interface CodeCounting {
  /** The one-time token the code came with (a login challenge, a reset link): its 5th wrong code kills it. */
  token?: string
  /**
   * The known device the request proved for the account's address (KnownDevices.recognise): its own code
   * counter judges the code instead of the account's, so a stranger with the password cannot hold the
   * owner's device out.
   */
  deviceId?: string | null
  /** Codes sent with a reset link count on the link alone (token), never on an account or device counter. */
  tokenOnly?: boolean
}

const ACCEPTED = Object.freeze({ outcome: 'accepted' } as const)
const REJECTED = Object.freeze({ outcome: 'rejected' } as const)

export interface SecondFactorOptions {
  store: MfaStore
  attempts: AttemptStore
  tokenGuesses: TokenGuesses
  keyRing: KeyRing
  storeCall: StoreCall
  /** The blocks after the free failures, as the password throttle has them (contract §6). */
  throttle: Omit<ThrottlePolicy, 'freeFailures'>
  /** The `issuer` of the otpauth URI: the name authenticator apps show. */
  issuer: string
}

/**
 * TOTP and recovery codes (contract §15). Codes are checked on a code counter of their own (10 free failures,
 * then the password throttle's blocks; 100 in a row lock it until a password reset), never the password's:
 * the account's, or a known device's, or only the one-time token's for a reset link. A TOTP step is accepted
 * once per account (the store advances the last step by compare-and-set), a recovery code once (the store
 * removes it).
 */
export class SecondFactor {
  readonly #store: MfaStore
  readonly #attempts: AttemptStore
  readonly #tokenGuesses: TokenGuesses
  readonly #storeCall: StoreCall
  readonly #policy: ThrottlePolicy
  readonly #lockPolicy: ThrottlePolicy
  readonly #box: SecretBox
  readonly #recoveryCodes: RecoveryCodes
  readonly #issuer: string

  constructor ({ store, attempts, tokenGuesses, keyRing, storeCall, throttle, issuer }: SecondFactorOptions) {
    this.#store = store
    this.#attempts = attempts
    this.#tokenGuesses = tokenGuesses
    this.#storeCall = storeCall
    this.#policy = Object.freeze({ ...throttle, freeFailures: FREE_CODE_FAILURES })
    this.#lockPolicy = Object.freeze({ freeFailures: CODE_FAILURES_BEFORE_LOCK, blockMs: LOCK_MS, maxBlockMs: LOCK_MS, forgetAfterMs: LOCK_MS, leaseMs: throttle.leaseMs })
    this.#box = new SecretBox(keyRing)
    this.#recoveryCodes = new RecoveryCodes(keyRing)
    this.#issuer = issuer
  }

  /**
   * What identifies the account's two factors while they are on (its sealed secret, new at every set-up);
   * null while they are off. A route that starts a session compares it before and after: a switch in between
   * (Confirm, Disable) may have ended the account's other sessions before this one existed.
   */
  async enrolment (request: FastifyRequest, accountId: string): Promise<string | null> {
    const record = await this.#get(request, accountId)
    return record?.enabled === true ? this.#fingerprint(accountId, record.secret) : null
  }

  /** The enrolment of a sealed secret: its plaintext's hash, so re-sealing it (another key, another IV) is no new enrolment. */
  #fingerprint (accountId: string, sealed: string): string {
    const secret = this.#box.open(accountId, sealed)
    return secret === null ? sealed : createHash('sha256').update(`${accountId}\0${secret}`).digest('base64url')
  }

  /**
   * Re-seals under the first key every secret an older key sealed (`passwordAuth.reseal()`, before a key is
   * removed). `resealed`: how many were; `unreadable`: how many no configured key opens (sealed under a key
   * already removed: those accounts must set two factors up again).
   */
  async resealAll (): Promise<{ resealed: number, unreadable: number }> {
    let resealed = 0
    let unreadable = 0
    for await (const { accountId, secret } of this.#store.secrets()) {
      if (this.#box.isCurrent(secret)) continue
      const result = await this.#reseal(accountId, secret)
      if (result === null) unreadable++
      else if (result) resealed++
    }
    return { resealed, unreadable }
  }

  /** Re-seals one secret under the first key: true if it did, false if the record changed meanwhile, null if no key opens it. */
  async #reseal (accountId: string, sealed: string): Promise<boolean | null> {
    const secret = this.#box.open(accountId, sealed)
    if (secret === null) return null
    return await this.#store.reseal(accountId, sealed, this.#box.seal(accountId, secret))
  }

  /** `on`, `pending` (a Setup waits for its Confirm) or `off`. */
  async state (request: FastifyRequest, accountId: string): Promise<'on' | 'pending' | 'off'> {
    const record = await this.#get(request, accountId)
    return record === null ? 'off' : record.enabled ? 'on' : 'pending'
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
   * to show once. The code's step is recorded, so it cannot log in. Counted like check()'s codes.
   */
  async confirm (request: FastifyRequest, accountId: string, code: string, { deviceId = null }: Pick<CodeCounting, 'deviceId'> = {}): Promise<ConfirmCheck> {
    return await this.#counted(request, this.#counterKeys(accountId, deviceId), async (): Promise<ConfirmCheck> => {
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
   * the account has two factors off (nothing counted); with them on, a missing code is `missing`, not
   * counted. Where a code counts: see CodeCounting.
   */
  async check (request: FastifyRequest, accountId: string, code: string | undefined, { recovery = true, token, deviceId = null, tokenOnly = false }: CodeCounting & { recovery?: boolean } = {}):
  Promise<SecondFactorCheck> {
    const record = await this.#get(request, accountId)
    if (record === null || !record.enabled) return { outcome: 'off' }
    if (code === undefined) return { outcome: 'missing' }
    return await this.#checkCounted(request, accountId, record, async () => await this.#verify(request, accountId, record, code, recovery), { token, deviceId, tokenOnly })
  }

  /**
   * Checks another proof in place of a code (a passkey at LoginMfa, contract §18): `verify` resolves whether
   * it was accepted, and a refusal counts exactly as a wrong code would. `off` when two factors are off.
   */
  async checkWith (request: FastifyRequest, accountId: string, verify: () => Promise<boolean>, counting: CodeCounting = {}): Promise<SecondFactorCheck> {
    const record = await this.#get(request, accountId)
    if (record === null || !record.enabled) return { outcome: 'off' }
    return await this.#checkCounted(request, accountId, record, async () => await verify() ? ACCEPTED : REJECTED, counting)
  }

  async #checkCounted (request: FastifyRequest, accountId: string, record: StoredMfa, run: () => Promise<CodeCheck>, { token, deviceId = null, tokenOnly = false }: CodeCounting):
  Promise<SecondFactorCheck> {
    const counter = tokenOnly ? null : this.#counterKeys(accountId, deviceId)
    let result: CodeCheck | { outcome: 'throttled', retryAfter: number }
    let blockMs = 0
    if (token === undefined) {
      result = await this.#counted(request, counter, run)
    } else {
      // The token's guesses count in the account's group, so a challenge's or a link's counter goes when the account is deleted.
      const guess = await runCounted(async () => await this.#tokenGuesses.reserve(request, COUNTER_KEYS.tokenGuesses(accountId, token)),
        async () => await this.#counted(request, counter, run), outcomeOfCheck)
      // Spent (the token was killed at its 5th wrong code), or as many codes in flight as it has left.
      if ('refused' in guess) return REJECTED
      result = guess.result
      blockMs = guess.blockMs
    }
    if (result.outcome === 'accepted') {
      // A secret an older key sealed is re-sealed at its use, so removing that key later locks nobody out.
      if (!this.#box.isCurrent(record.secret)) {
        await this.#storeCall(request.log, 'mfa.reseal', async () => await this.#reseal(accountId, record.secret)).catch(() => {})
      }
      return { outcome: 'accepted', enrolment: this.#fingerprint(accountId, record.secret) }
    }
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

  /** Forgets the account's code failures and lifts its block and lock, as a password reset does. */
  async clearFailures (request: FastifyRequest, accountId: string): Promise<void> {
    const { key, lockKey } = this.#counterKeys(accountId, null)
    await settleSuccess(this.#attempts, this.#storeCall, request.log, key, this.#policy)
    await settleSuccess(this.#attempts, this.#storeCall, request.log, lockKey, this.#lockPolicy)
  }

  /**
   * Removes the account's second factor and its code counters (an admin's resetSecondFactor, account deletion);
   * resolves whether two factors were on.
   */
  async forget (caller: { log: FastifyBaseLogger }, accountId: string): Promise<boolean> {
    const wasOn = await this.#storeCall(caller.log, 'mfa.disable', () => this.#store.disable(accountId))
    const { key, lockKey } = this.#counterKeys(accountId, null)
    await forgetCounter(this.#attempts, this.#storeCall, caller.log, key, this.#policy)
    await forgetCounter(this.#attempts, this.#storeCall, caller.log, lockKey, this.#lockPolicy)
    return wasOn
  }

  /** The attempt-store keys of a code counter: the account's, or a known device's own. */
  #counterKeys (accountId: string, deviceId: string | null): { key: string, lockKey: string } {
    return deviceId === null
      ? { key: COUNTER_KEYS.codes(accountId), lockKey: COUNTER_KEYS.codesLock(accountId) }
      : { key: COUNTER_KEYS.deviceCodes(accountId, deviceId), lockKey: COUNTER_KEYS.deviceCodesLock(accountId, deviceId) }
  }

  /**
   * Runs one code check on a code counter (none for a reset link's codes): one attempt reserved on the counter, then
   * on its lock (a blocked or locked counter gets `throttled`), settled on both as a success (`accepted`) or a
   * failure (`rejected`); anything else (a store failure, `no_setup`) counts neither way.
   */
  async #counted<T extends { outcome: string }> (request: FastifyRequest, counter: { key: string, lockKey: string } | null, run: () => Promise<T>):
  Promise<T | { outcome: 'throttled', retryAfter: number }> {
    if (counter === null) return await run()
    const { log } = request
    const counted = await runCounted(async () => await reserveInTurn([
      async () => await reserveAttempt(this.#attempts, this.#storeCall, log, counter.key, this.#policy),
      async () => await reserveAttempt(this.#attempts, this.#storeCall, log, counter.lockKey, this.#lockPolicy)
    ]), run, outcomeOfCheck)
    return 'refused' in counted ? { outcome: 'throttled', retryAfter: retryAfterSeconds(counted.refused.retryAfterMs) } : counted.result
  }

  async #get (request: FastifyRequest, accountId: string) {
    return await this.#storeCall(request.log, 'mfa.get', () => this.#store.get(accountId))
  }
}
