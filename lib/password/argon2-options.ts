import { invalidOption } from '../common/errors.js'
import { assert, checkKnownKeys, isInteger, isObject } from '../common/option-rules.js'

export interface Argon2Params {
  /** KiB of memory per hash. */
  memoryCost: number
  /** Passes over the memory. */
  timeCost: number
  parallelism: number
}

/** The plugin's `argon2` option, which `hashPassword` takes too. */
export type Argon2Options = Partial<Argon2Params> & {
  /** Secret mixed into every hash (argon2 `secret`), kept outside the account store. */
  pepper?: string | Uint8Array
}

/** The OWASP / ASVS 5.0 minimum for argon2id. */
export const DEFAULT_ARGON2: Readonly<Argon2Params> = Object.freeze({ memoryCost: 19456, timeCost: 2, parallelism: 1 })

export const ARGON2_OPTION_KEYS = ['memoryCost', 'timeCost', 'parallelism', 'pepper'] as const

/**
 * Checks the `argon2` option and fills in the defaults; the plugin and `hashPassword` both resolve it
 * here, so they accept the same values and fail with the same FST_PWAUTH_INVALID_OPTION messages.
 */
export function resolveArgon2 (argon2: Argon2Options | undefined): { params: Argon2Params, pepper: Uint8Array | undefined } {
  if (argon2 === undefined) return { params: { ...DEFAULT_ARGON2 }, pepper: undefined }
  if (!isObject(argon2)) throw invalidOption('argon2 must be an object')
  checkKnownKeys(argon2, ARGON2_OPTION_KEYS, 'argon2')
  const { pepper, ...costs } = argon2
  const params = { ...DEFAULT_ARGON2, ...costs }
  assert(isInteger(params.parallelism, 1, 255), 'argon2.parallelism must be a whole number from 1 to 255')
  assert(isInteger(params.memoryCost, 8 * params.parallelism, 4_194_304), 'argon2.memoryCost must be KiB from 8 × parallelism to 4194304')
  assert(isInteger(params.timeCost, 1, 100), 'argon2.timeCost must be a whole number from 1 to 100')
  assert(pepper === undefined || typeof pepper === 'string' || pepper instanceof Uint8Array, 'argon2.pepper must be a string or a Uint8Array')
  assert(pepper === undefined || pepper.length > 0, 'argon2.pepper must not be empty')
  return { params, pepper: typeof pepper === 'string' ? Buffer.from(pepper) : pepper }
}
