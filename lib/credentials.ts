import type { FastifyRequest } from 'fastify'
import type { LoginFailureReason } from './events.js'
import type { PasswordHasher } from './password.js'
import type { StoreCall } from './store-call.js'
import type { AccountStore, StoredAccount } from './stores/types.js'
import type { EmailThrottle } from './throttle.js'

export type PasswordCheckResult =
  | { outcome: 'verified', account: StoredAccount }
  | { outcome: 'failed', reason: LoginFailureReason, account: StoredAccount | null }
  | { outcome: 'throttled', retryAfter: number }

export type CheckPassword = (request: FastifyRequest, email: string, password: string) => Promise<PasswordCheckResult>

interface Dependencies {
  accounts: AccountStore
  hasher: PasswordHasher
  throttle: EmailThrottle
  storeCall: StoreCall
  /** Verified instead of a missing or inactive account's hash, so every failure costs one verification. */
  dummyHash: string
}

/**
 * The password check Login and ChangePassword share: throttle reservation first, then exactly one argon2
 * verification whatever the account's state, then the reservation is settled with the outcome.
 */
export function createPasswordCheck ({ accounts, hasher, throttle, storeCall, dummyHash }: Dependencies): CheckPassword {
  return async function checkPassword (request, email, password) {
    const attempt = await throttle.begin(request, email)
    if (!('settle' in attempt)) return { outcome: 'throttled', retryAfter: attempt.retryAfter }

    let result: PasswordCheckResult
    try {
      const account = await storeCall(request, 'accounts.findByEmail', async () => await accounts.findByEmail(email))
      if (account !== null && account.active) {
        result = await hasher.verify(account.passwordHash, password)
          ? { outcome: 'verified', account }
          : { outcome: 'failed', reason: 'wrong_password', account }
      } else {
        await hasher.verify(dummyHash, password)
        result = { outcome: 'failed', reason: account === null ? 'unknown_account' : 'inactive_account', account }
      }
    } catch (err) {
      // Undecided (store down, hashing at capacity): the attempt counts neither way.
      await attempt.settle('cancel').catch(() => {})
      throw err
    }
    await attempt.settle(result.outcome === 'verified' ? 'success' : 'failure')
    return result
  }
}
