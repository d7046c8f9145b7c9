import { randomBytes } from 'node:crypto'
import { hash, verify } from '@node-rs/argon2'
import type { HashQueue } from './hash-queue.js'

export interface Argon2Params {
  /** KiB of memory per hash. */
  memoryCost: number
  /** Passes over the memory. */
  timeCost: number
  parallelism: number
}

/** The OWASP / ASVS 5.0 minimum for argon2id. */
export const DEFAULT_ARGON2: Readonly<Argon2Params> = Object.freeze({ memoryCost: 19456, timeCost: 2, parallelism: 1 })

/**
 * Well-formed UTF-16: no lone surrogate. argon2 would map every lone surrogate to U+FFFD, so different
 * passwords would share a hash. Means the same with or without the regular expression `u` flag.
 */
export const WELL_FORMED_PATTERN = String.raw`^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$`

const PHC_PARAMS = /^\$(argon2(?:id|i|d))\$v=(\d+)\$m=(\d+),t=(\d+),p=(\d+)\$/

/** Passwords are hashed and verified in NFC and otherwise exactly as sent. */
export function normalizePassword (password: string): string {
  return password.normalize('NFC')
}

/** Number of Unicode code points, the unit of the password policy. */
export function codePointLength (text: string): number {
  let length = 0
  for (const _ of text) length++
  return length
}

/** Hashes a password with argon2id, for hosts creating accounts. Same normalisation as the plugin. */
export async function hashPassword (password: string, params: Partial<Argon2Params> & { pepper?: Uint8Array } = {}): Promise<string> {
  if (typeof password !== 'string' || password.length === 0 || !password.isWellFormed()) {
    throw new TypeError('hashPassword: the password must be a non-empty, well-formed string')
  }
  const { pepper, ...costs } = params
  return await hash(normalizePassword(password), { ...DEFAULT_ARGON2, ...costs, secret: pepper })
}

/** True when the stored hash was made with weaker argon2 parameters than `params`, or is not argon2id. */
export function isWeakerHash (storedHash: string, params: Argon2Params): boolean {
  const match = PHC_PARAMS.exec(storedHash)
  if (match === null) return false
  const [, algorithm, version, memoryCost, timeCost] = match
  return algorithm !== 'argon2id' || Number(version) < 19 ||
    Number(memoryCost) < params.memoryCost || Number(timeCost) < params.timeCost
}

/** Counters of the argon2 work done since registration. */
export interface HashingStats {
  verifications: number
  hashes: number
  /** Operations refused with 503 because the wait list was full. */
  shed: number
  /** Operations running or waiting now. */
  inFlight: number
}

/** argon2id hashing and verification with the configured parameters, through the bounded queue. */
export class PasswordHasher {
  readonly params: Readonly<Argon2Params>
  readonly #options: Argon2Params & { secret?: Uint8Array }
  readonly #queue: HashQueue
  #verifications = 0
  #hashes = 0

  constructor (params: Argon2Params, pepper: Uint8Array | undefined, queue: HashQueue) {
    this.params = Object.freeze({ ...params })
    this.#options = { ...params, secret: pepper }
    this.#queue = queue
  }

  async hash (password: string): Promise<string> {
    return await this.#queue.run(async () => {
      this.#hashes++
      return await hash(normalizePassword(password), this.#options)
    })
  }

  /** False for a wrong password and for a stored hash that is not a valid argon2 string. */
  async verify (storedHash: string, password: string): Promise<boolean> {
    return await this.#queue.run(async () => {
      this.#verifications++
      try {
        return await verify(storedHash, normalizePassword(password), this.#options)
      } catch {
        return false
      }
    })
  }

  stats (): HashingStats {
    return { verifications: this.#verifications, hashes: this.#hashes, shed: this.#queue.shed, inFlight: this.#queue.size }
  }

  /** A hash of a random password with the configured parameters, verified instead of a missing one. */
  async createDummyHash (): Promise<string> {
    return await hash(randomBytes(32).toString('base64url'), this.#options)
  }
}
