import type { FastifyRequest } from 'fastify'
import type { EmitEvent, LoginFailureReason, ResetRequiredReason } from '../common/events.js'
import type { BreachCheck } from './breach-options.js'
import { needsUpgrade, normalizePassword, type PasswordHasher } from './hasher.js'
import { readResetMark } from '../stores/reset-required.js'
import type { AccountReads } from '../stores/account-reads.js'
import type { StoredAccount } from '../stores/types.js'
import type { AttemptThrottle } from '../throttle/attempt-throttle.js'
import { runCounted } from '../throttle/counted.js'
import type { KnownDevice } from '../throttle/known-devices.js'

/** A password check, as every caller switches on it (routes/refusals.ts answers the two that did not pass). */
export type PasswordCheckResult =
  | { outcome: 'accepted', account: StoredAccount, hashFormat: string, needsUpgrade: boolean }
  | { outcome: 'rejected', reason: LoginFailureReason, account: StoredAccount | null }
  /**
   * The password verified, but may not be used: a reset is required first (`admin`, an admin's requirePasswordReset) or
   * the range service knows it (`breached`, contract §20): routes/refusals.ts refuseResetRequired.
   */
  | { outcome: 'reset_required', account: StoredAccount, reason: ResetRequiredReason }
  /** `device`: the request was judged on a known device's counter. */
  | { outcome: 'throttled', retryAfter: number, device: boolean }

/**
 * `device`: the known device the request proved for `email` (KnownDevices.recognise), or null. `read`: the
 * account as the caller just read it for that (null: none), so it is not read twice; undefined: read it here.
 */
export type CheckPassword = (request: FastifyRequest, email: string, password: string, device: KnownDevice | null, read?: StoredAccount | null) => Promise<PasswordCheckResult>

interface Dependencies {
  accounts: AccountReads
  hasher: PasswordHasher
  throttle: AttemptThrottle
  emit: EmitEvent
  /** Verified instead of a missing or inactive account's hash, so every failure costs one verification. */
  dummyHash: string
  /** The breached-password range service, asked about a password only once it verified. */
  breachCheck?: BreachCheck | undefined
}

/**
 * The password check Login and ChangePassword share, one attempt on the throttle's counter (runCounted): exactly one
 * verification of the stored hash whatever its format (argon2 against a dummy hash when there is no usable
 * account or the stored hash is in no known format), settled with the outcome.
 * A failure that starts a block is reported once, as `login.blocked`, so the host can tell the owner. A
 * verified password the range service knows (contract §20) is `reset_required`; a service that gives no
 * answer lets it through (its event says so): sign-in never depends on it.
 */
export function createPasswordCheck ({ accounts, hasher, throttle, emit, dummyHash, breachCheck }: Dependencies): CheckPassword {
  return async function checkPassword (request, email, password, device, read) {
    // A marked account's right password is no failure: its owner is not to be locked out of the refusal and its link.
    const counted = await runCounted(async () => await throttle.begin(request, email, device), async (attempt): Promise<Exclude<PasswordCheckResult, { outcome: 'throttled' }>> => {
      const account = read !== undefined ? read : await accounts.byEmail(request, email)
      if (account !== null && account.active) {
        const { resetRequired, hash } = readResetMark(account.passwordHash)
        const check = await hasher.check(hash, password, attempt.startBy)
        // A hash in no known format costs one argon2 verification too, like every other failure.
        if (check.verdict === 'unsupported_hash') await hasher.verify(dummyHash, password, attempt.startBy)
        return check.verdict !== 'verified'
          ? { outcome: 'rejected', reason: check.verdict, account }
          : resetRequired
            ? { outcome: 'reset_required', account, reason: 'admin' }
            : { outcome: 'accepted', account, hashFormat: check.format, needsUpgrade: needsUpgrade(check.argon2, hasher.params) }
      }
      await hasher.verify(dummyHash, password, attempt.startBy)
      return { outcome: 'rejected', reason: account === null ? 'unknown_account' : 'inactive_account', account }
    }, (result) => result.outcome === 'rejected' ? 'failure' : 'success')
    if ('refused' in counted) return { outcome: 'throttled', retryAfter: counted.refused.retryAfter, device: device !== null }
    const { result, blockMs } = counted
    if (blockMs > 0) {
      emit(request, { type: 'login.blocked', email, accountId: result.account?.id, device: device !== null, seconds: Math.ceil(blockMs / 1000) })
    }
    // Only now, with the password verified and the attempt settled: whoever lacks the password got the
    // rejection above in the time it always takes, and the range service never hears of the attempt.
    if (result.outcome === 'accepted' && breachCheck !== undefined &&
      await breachCheck.check(request, normalizePassword(password), 'current', result.account.id) === 'breached') {
      return { outcome: 'reset_required', account: result.account, reason: 'breached' }
    }
    return result
  }
}
