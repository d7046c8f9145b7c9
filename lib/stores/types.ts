/**
 * The account as route handlers see it on `request.account`. Hosts add their own fields by declaration
 * merging:
 *
 * ```ts
 * declare module 'fastify-password-auth' {
 *   interface PasswordAuthAccount { displayName: string }
 * }
 * ```
 */
export interface PasswordAuthAccount {
  id: string
  /** Normalised: trimmed and lower-cased. */
  email: string
  active: boolean
  /** Advanced by every password change; tokens carrying an older version are rejected. */
  credentialVersion: number
}

/** An account as the store holds it. */
export interface StoredAccount extends PasswordAuthAccount {
  /** argon2 PHC string. */
  passwordHash: string
}

export interface PasswordHashUpdate {
  id: string
  /** The update happens only if the stored hash is still this one (compare-and-set). */
  expectedHash: string
  newHash: string
  /** True for a password change (every earlier token dies); false for a rehash of the same password. */
  advanceCredentialVersion: boolean
}

export interface AccountStore {
  /** Looks an account up by its normalised e-mail address. Inactive accounts are returned too. */
  findByEmail (email: string): Promise<StoredAccount | null>
  findById (id: string): Promise<StoredAccount | null>
  /**
   * Replaces the password hash if it still equals `expectedHash`, advancing the credential version when
   * asked, atomically. Resolves true if it replaced it, false if the hash had changed or the account is gone.
   */
  updatePasswordHash (update: PasswordHashUpdate): Promise<boolean>
}

export interface RevocationStore {
  /** Revokes a token id until `expiresAt` (epoch milliseconds); afterwards the token is expired anyway. */
  revoke (tokenId: string, expiresAt: number): Promise<void>
  isRevoked (tokenId: string): Promise<boolean>
}

/** The per-key failure policy, passed on every call so stores hold no configuration of their own. */
export interface ThrottlePolicy {
  /** Consecutive failures allowed before the key is blocked. */
  freeFailures: number
  /** Block after the last free failure; doubles with each further failure. */
  blockMs: number
  maxBlockMs: number
  /** How long an unsettled reservation counts (a process that died between reserve and settle). */
  leaseMs: number
  /** Failures are forgotten this long after the last one (or after the block ends, if later). */
  forgetAfterMs: number
}

export type Reservation =
  | { granted: true, ticket: string }
  | { granted: false, retryAfterMs: number }

/** `cancel`: the attempt was not decided (a store or capacity failure) and counts neither way. */
export type AttemptOutcome = 'success' | 'failure' | 'cancel'

/**
 * Counts password attempts per key. An attempt is reserved before the password is verified and settled
 * after, so attempts in flight count: with `f` failures recorded and `r` reservations open, a new
 * reservation is granted only if the key is not blocked and `r < max(1, freeFailures - f)`. A denial
 * carries the time left of the block, or min(1 s, leaseMs) while attempts are in flight.
 */
export interface AttemptStore {
  reserve (key: string, policy: ThrottlePolicy): Promise<Reservation>
  settle (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy): Promise<void>
}
