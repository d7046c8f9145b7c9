import type { FastifyRequest } from 'fastify'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptStore, ThrottlePolicy } from '../stores/types.js'
import { reserveAttempt, type ReservedAttempt } from './reserve-attempt.js'

/** Wrong guesses a one-time token survives: codes sent with a login challenge or a reset link, passwords sent with a verification link. */
export const GUESSES_PER_TOKEN = 5

const DAY_MS = 86_400_000
const LEASE_MS = 10_000

/** After its 5th wrong guess a token's key stays blocked for a day; the caller kills the token then. */
export const TOKEN_GUESS_POLICY: ThrottlePolicy = Object.freeze({
  freeFailures: GUESSES_PER_TOKEN, blockMs: DAY_MS, maxBlockMs: DAY_MS, leaseMs: LEASE_MS, forgetAfterMs: DAY_MS
})

/** A reserved guess; settle it once. A failure that resolves a block was the token's last. */
export interface TokenGuess extends ReservedAttempt {
  /** performance.now() time by which an argon2 verification must start, so the guess is still counted while it runs. */
  startBy: number
}

/**
 * Guesses sent with a one-time token, counted in the attempt store under the token's key
 * (COUNTER_KEYS.tokenGuesses): at most as many in flight as the token has left, so 200 parallel wrong
 * guesses get no more than 5 checks.
 */
export class TokenGuesses {
  readonly #store: AttemptStore
  readonly #storeCall: StoreCall

  constructor (store: AttemptStore, storeCall: StoreCall) {
    this.#store = store
    this.#storeCall = storeCall
  }

  /** A guess on the token's `key` (COUNTER_KEYS.tokenGuesses); refused once it had its 5 wrong ones, or while its other guesses are in flight. */
  async reserve (request: FastifyRequest, key: string): Promise<TokenGuess | { retryAfterMs: number }> {
    const reservedAt = performance.now()
    const guess = await reserveAttempt(this.#store, this.#storeCall, request.log, key, TOKEN_GUESS_POLICY)
    return 'settle' in guess ? { settle: guess.settle, startBy: reservedAt + LEASE_MS / 2 } : guess
  }
}
