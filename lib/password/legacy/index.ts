import type { BuiltInFormatName, HashTask, VerifyResult } from '../hash-tasks.js'
import { parseArgon2Hash, type Argon2Hash } from './argon2.js'
import { bcryptCost } from './bcrypt.js'
import { parseDjangoPbkdf2Hash } from './django.js'
import { parseScryptHash } from './scrypt.js'
import type { LegacyHashFormat } from './types.js'

export type { LegacyHashFormat } from './types.js'

/** Names of the built-in formats, which host formats may not take. */
export const BUILT_IN_FORMATS = ['argon2id', 'argon2i', 'argon2d', 'bcrypt', 'scrypt', 'django-pbkdf2-sha256'] as const

/**
 * `format` names the format the stored hash is in (known whenever the password could be checked);
 * `argon2` holds an argon2 hash's parameters, parsed once for the verification and the upgrade decision.
 */
export type HashCheck =
  | { verdict: 'verified' | 'wrong_password', format: string, argon2?: Argon2Hash }
  | { verdict: 'unsupported_hash', format?: string }

/**
 * The largest argon2 costs a stored row may ask for: 256 MiB and 10 passes (Bitwarden, Keycloak and
 * OWASP's profiles stay well inside), or the plugin's own configured costs if higher. One row of 256 MiB
 * and 8 passes already took a server from 93 to 350 MiB for one wrong guess; beyond these, a row fails
 * like an unknown format.
 */
export const ARGON2_ROW_LIMITS = Object.freeze({ memoryCost: 262_144, timeCost: 10 })

export interface HashVerifierOptions {
  /** The plugin's own argon2 costs: rows up to them (or ARGON2_ROW_LIMITS, if higher) are verified. */
  params: { memoryCost: number, timeCost: number }
  /** The host's own formats, tried before the built-in legacy ones. */
  legacyHashes: readonly LegacyHashFormat[]
  log: { error: (details: object, message: string) => void }
  /** Verifies with a built-in format, on a hashing worker (HashPool.verify). */
  verifyBuiltIn: (task: Extract<HashTask, { kind: 'verify' }>) => Promise<VerifyResult>
}

export type VerifyStoredHash = (storedHash: string, password: string) => Promise<HashCheck>

/** How the built-in legacy formats are recognised, in the main thread, before a worker verifies. */
const BUILT_IN_LEGACY: ReadonlyArray<{ name: Exclude<BuiltInFormatName, 'argon2'>, test: (hash: string) => boolean }> = [
  { name: 'bcrypt', test: (hash) => bcryptCost(hash) !== null },
  { name: 'scrypt', test: (hash) => parseScryptHash(hash) !== null },
  { name: 'django-pbkdf2-sha256', test: (hash) => parseDjangoPbkdf2Hash(hash) !== null }
]

/**
 * Verifies a password against a stored hash in any known format. argon2 strings are the plugin's own and
 * get the NFC form, as always. Other systems hashed what the user typed, so a legacy hash is tried with
 * the password as sent and, only if that differs, with its NFC form (a user now typing on a device that
 * composes characters differently). A string in no known format is `unsupported_hash`. The built-in
 * formats are verified on a hashing worker; the host's own formats (functions, which cannot cross into a
 * thread) where they were given.
 */
export function createHashVerifier ({ params, legacyHashes, log, verifyBuiltIn }: HashVerifierOptions): VerifyStoredHash {
  const maxMemory = Math.max(ARGON2_ROW_LIMITS.memoryCost, params.memoryCost)
  const maxTime = Math.max(ARGON2_ROW_LIMITS.timeCost, params.timeCost)
  const formats = [...legacyHashes, ...BUILT_IN_LEGACY]
  /** Built-in formats a worker could not load (an optional package missing): told once, never retried. */
  const unavailable = new Set<string>()

  return async function verifyStoredHash (storedHash, password) {
    const nfc = password.normalize('NFC')
    const argon2 = parseArgon2Hash(storedHash)
    if (argon2 !== null) {
      if (argon2.memoryCost > maxMemory || argon2.timeCost > maxTime) return { verdict: 'unsupported_hash', format: argon2.algorithm }
      const verified = await verifyBuiltIn({ kind: 'verify', format: 'argon2', hash: storedHash, passwords: [nfc] })
      return { verdict: verified === true ? 'verified' : 'wrong_password', format: argon2.algorithm, argon2 }
    }
    const format = formats.find((candidate) => candidate.test(storedHash))
    if (format === undefined) return { verdict: 'unsupported_hash' }
    const candidates = password === nfc ? [password] : [password, nfc]
    if ('verify' in format) {
      for (const candidate of candidates) {
        // Exactly true: a host verifier resolving anything else has not vouched for the password.
        if (await format.verify(storedHash, candidate) === true) return { verdict: 'verified', format: format.name }
      }
      return { verdict: 'wrong_password', format: format.name }
    }
    if (unavailable.has(format.name)) return { verdict: 'unsupported_hash', format: format.name }
    const result = await verifyBuiltIn({ kind: 'verify', format: format.name, hash: storedHash, passwords: candidates })
    if (typeof result === 'boolean') return { verdict: result ? 'verified' : 'wrong_password', format: format.name }
    if (!unavailable.has(format.name)) {
      unavailable.add(format.name)
      log.error({ importError: result.unavailable },
        'fastify-password-auth: an account has a bcrypt password hash but @node-rs/bcrypt cannot be loaded; ' +
        'run `npm install @node-rs/bcrypt`. Until then bcrypt accounts cannot log in (event reason unsupported_hash)')
    }
    return { verdict: 'unsupported_hash', format: format.name }
  }
}
