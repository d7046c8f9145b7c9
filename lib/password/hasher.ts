import { randomBytes } from 'node:crypto'
import { hash } from '@node-rs/argon2'
import { resolveArgon2, type Argon2Options, type Argon2Params } from './argon2-options.js'
import { HashPool } from './hash-pool.js'
import type { HashQueue } from './hash-queue.js'
import type { Argon2Hash } from './legacy/argon2.js'
import { BCRYPT_MODULE } from './legacy/bcrypt.js'
import { createHashVerifier, type HashCheck, type LegacyHashFormat, type VerifyStoredHash } from './legacy/index.js'

/** Passwords are hashed and verified in NFC and otherwise exactly as sent. */
export function normalizePassword (password: string): string {
  return password.normalize('NFC')
}

/** Number of Unicode code points, the unit of the password policy. */
export function codePointLength (text: string): number {
  return [...text].length
}

/**
 * Hashes a password with argon2id, for hosts creating accounts. Takes the plugin's `argon2` option
 * (costs and pepper, checked the same way) and normalises the password as the plugin does.
 */
export async function hashPassword (password: string, argon2?: Argon2Options): Promise<string> {
  if (typeof password !== 'string' || password.length === 0 || !password.isWellFormed()) {
    throw new TypeError('hashPassword: the password must be a non-empty, well-formed string')
  }
  const { params, pepper } = resolveArgon2(argon2)
  return await hash(normalizePassword(password), { ...params, secret: pepper })
}

/**
 * True when a verified stored hash should be replaced: it is not argon2id (a legacy format, argon2i or
 * argon2d), or was made with an older version or weaker parameters than `params`. Stronger argon2id
 * hashes are left alone.
 */
export function needsUpgrade (argon2: Argon2Hash | null | undefined, params: Argon2Params): boolean {
  return argon2 == null || argon2.algorithm !== 'argon2id' || argon2.version < 19 ||
    argon2.memoryCost < params.memoryCost || argon2.timeCost < params.timeCost
}

/** Counters of the password-hashing work done since registration, and the pool's size. */
export interface HashingStats {
  verifications: number
  hashes: number
  /** Operations refused with 503 because the wait list was full. */
  shed: number
  /** Operations running or waiting now. */
  inFlight: number
  /** Operations running now, each on a thread of the pool (at most `threads`). */
  running: number
  /** Threads of the hashing pool (`hashing.threads`): the operations that can run at once. */
  threads: number
}

export interface PasswordHasherOptions {
  params: Argon2Params
  pepper: Uint8Array | undefined
  /** Where every operation waits for a slot: one slot per thread of the pool, which it sizes. */
  queue: HashQueue
  legacyHashes: readonly LegacyHashFormat[]
  log: { error: (details: object, message: string) => void }
  /** The module bcrypt hashes are verified with (tests name a missing one). */
  bcryptModule?: string
  /** The hashing worker's module (tests give one that crashes). */
  worker?: URL
  /** Threads shared with other registrations (shared-hashing.ts), sized for `queue`; else a pool of its own. */
  sharedPool?: { pool: HashPool, release: () => Promise<void> }
}

/**
 * argon2id hashing with the configured parameters, and verification of stored hashes in every known
 * format, all through the bounded queue and on the plugin's own threads (HashPool). close() ends them.
 */
export class PasswordHasher {
  readonly params: Readonly<Argon2Params>
  readonly #queue: HashQueue
  readonly #pool: HashPool
  readonly #closePool: () => Promise<void>
  readonly #verifyStoredHash: VerifyStoredHash
  #verifications = 0
  #hashes = 0

  constructor ({ params, pepper, queue, legacyHashes, log, bcryptModule = BCRYPT_MODULE, worker, sharedPool }: PasswordHasherOptions) {
    this.params = Object.freeze({ ...params })
    this.#queue = queue
    const pool = sharedPool?.pool ?? new HashPool({ threads: queue.concurrency, workerData: { params: { ...params }, pepper, bcryptModule }, log, worker })
    this.#pool = pool
    this.#closePool = sharedPool?.release ?? (async () => { await pool.close() })
    this.#verifyStoredHash = createHashVerifier({ params, legacyHashes, log, verifyBuiltIn: (task) => this.#pool.verify(task) })
  }

  async hash (password: string): Promise<string> {
    return await this.#queue.run(async () => {
      this.#hashes++
      return await this.#pool.hash(normalizePassword(password))
    })
  }

  /**
   * Whether the password matches, is wrong, or the stored hash is in no format this process can verify.
   * `startBy`: see HashQueue.run.
   */
  async check (storedHash: string, password: string, startBy?: number): Promise<HashCheck> {
    return await this.#queue.run(async () => {
      const check = await this.#verifyStoredHash(storedHash, password)
      if (check.verdict !== 'unsupported_hash') this.#verifications++
      return check
    }, startBy)
  }

  async verify (storedHash: string, password: string, startBy?: number): Promise<boolean> {
    return (await this.check(storedHash, password, startBy)).verdict === 'verified'
  }

  stats (): HashingStats {
    return {
      verifications: this.#verifications,
      hashes: this.#hashes,
      shed: this.#queue.shed,
      inFlight: this.#queue.size,
      running: this.#queue.running,
      threads: this.#pool.threads
    }
  }

  /**
   * A hash of a random password with the configured parameters, verified instead of a missing one. Made
   * at registration on the pool's first thread: if no thread can run, the registration fails.
   */
  async createDummyHash (): Promise<string> {
    try {
      return await this.#pool.hash(randomBytes(32).toString('base64url'))
    } catch {
      await this.close()
      throw new Error('fastify-password-auth: the password-hashing threads cannot run (see the error logged before this one)')
    }
  }

  /** Lets running hashes finish and ends the pool's threads (the plugin's onClose), unless other registrations still share them. */
  async close (): Promise<void> {
    await this.#closePool()
  }
}
