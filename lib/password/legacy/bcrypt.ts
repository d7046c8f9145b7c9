import { createRequire } from 'node:module'
import { HashFormatUnavailableError, type VerifyBuiltIn } from './types.js'

/** What the plugin uses of @node-rs/bcrypt, an optional peer dependency. */
export interface BcryptModule {
  verifySync: (password: string, hash: string) => boolean
}

export type LoadBcrypt = () => BcryptModule

/**
 * Cost 14 takes about 1 s on a 2 vCPU VM (10, the usual default of Laravel, Devise and Django's bcrypt
 * hashers, about 50 ms; 12 about 200 ms). Real systems stay at or below 13; beyond 14 one row could stall a
 * hashing slot for seconds, so such rows fail like an unknown format.
 */
export const BCRYPT_MAX_COST = 14

const BCRYPT = /^\$2[aby]\$(\d\d)\$([./A-Za-z0-9]{22})([./A-Za-z0-9]{31})$/
const ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/**
 * The cost of a `$2a$`, `$2b$` or `$2y$` hash, or null if the string is not one, its cost is outside 4 to
 * 14, or it is damaged: the salt's 22 characters carry 128 bits and the hash's 31 carry 184, so the last
 * character of each has unused low bits that bcrypt always writes as zero. A row with stray bits there
 * would be refused by bcrypt in a millisecond; as an unknown format it costs an argon2 verification,
 * like every other failure.
 */
export function bcryptCost (hash: string): number | null {
  const match = BCRYPT.exec(hash)
  if (match === null) return null
  const cost = Number(match[1])
  const canonical = ALPHABET.indexOf(match[2]!.at(-1)!) % 16 === 0 && ALPHABET.indexOf(match[3]!.at(-1)!) % 4 === 0
  return canonical && cost >= 4 && cost <= BCRYPT_MAX_COST ? cost : null
}

/** bcrypt reads at most this many bytes of a password (UTF-8). */
export const BCRYPT_MAX_PASSWORD_BYTES = 72

/** The package bcrypt hashes are verified with, loaded by each hashing worker that meets one. */
export const BCRYPT_MODULE = '@node-rs/bcrypt'

const require = createRequire(import.meta.url)

/** Loads `specifier` (BCRYPT_MODULE, or another in tests) synchronously, inside a hashing worker. */
export const bcryptLoader = (specifier: string): LoadBcrypt => () => require(specifier) as BcryptModule

/**
 * bcrypt through @node-rs/bcrypt, loaded when the first bcrypt hash is met. If it cannot be loaded,
 * every bcrypt hash is unverifiable (HashFormatUnavailableError, with the loader's error code and
 * message); the plugin tells the host once (legacy/index.ts).
 *
 * Passwords longer than 72 UTF-8 bytes are verified on their first 72 bytes, as the libraries that made
 * these hashes (OpenBSD, crypt_blowfish, node.bcrypt.js, bcryptjs, bcrypt-ruby) hashed them: rejecting
 * them would lock out every user with a long passphrase. Libraries that refuse long passwords instead
 * (Go's x/crypto, pyca/bcrypt 5) never made a hash a longer password could match unless it starts with the
 * whole 72-byte password. Such a login never upgrades the hash (event password.rehash_skipped): any
 * password sharing the first 72 bytes verifies, and hashing the one that came could lock out the owner's.
 */
export function createBcryptVerifier (load: LoadBcrypt): VerifyBuiltIn {
  let loaded: BcryptModule | HashFormatUnavailableError | undefined
  return function verifyBcrypt (hash, password) {
    if (loaded === undefined) {
      try {
        loaded = load()
      } catch (err) {
        const { code, message } = (err ?? {}) as { code?: unknown, message?: unknown }
        loaded = new HashFormatUnavailableError(String(message).slice(0, 300), typeof code === 'string' ? code : undefined)
      }
    }
    if (loaded instanceof HashFormatUnavailableError) throw loaded
    return loaded.verifySync(password, hash)
  }
}
