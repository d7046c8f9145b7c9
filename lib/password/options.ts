import { assert, group, isInteger } from '../common/option-rules.js'
import { defaultHashConcurrency } from './hash-queue.js'
import { BUILT_IN_FORMATS, type LegacyHashFormat } from './legacy/index.js'
import { DEFAULT_PASSWORD_POLICY, type PasswordPolicyOptions, type ResolvedPasswordPolicy } from './policy.js'

export interface HashingOptions {
  /** argon2 operations running at once; default: cores + 1, at most the libuv thread pool size minus one. */
  concurrency?: number
  /** argon2 operations allowed to wait; beyond that Login and ChangePassword answer 503 (default 32 × concurrency). */
  maxQueue?: number
}

export function resolvePasswordPolicy (policy: PasswordPolicyOptions | undefined): ResolvedPasswordPolicy {
  const {
    minLength = DEFAULT_PASSWORD_POLICY.minLength,
    maxLength = DEFAULT_PASSWORD_POLICY.maxLength,
    common = DEFAULT_PASSWORD_POLICY.common,
    check
  } = group(policy, ['minLength', 'maxLength', 'common', 'check'], 'passwordPolicy')
  assert(isInteger(minLength, 1, 1024), 'passwordPolicy.minLength must be a whole number from 1 to 1024')
  assert(isInteger(maxLength, minLength, 1024), 'passwordPolicy.maxLength must be a whole number from minLength to 1024')
  assert(typeof common === 'boolean', 'passwordPolicy.common must be true or false (the built-in list of common passwords)')
  assert(check === undefined || typeof check === 'function', 'passwordPolicy.check must be a function')
  return { minLength, maxLength, common, check }
}

export function resolveHashing (options: HashingOptions | undefined): Required<HashingOptions> {
  const hashing = group(options, ['concurrency', 'maxQueue'], 'hashing')
  const { concurrency = defaultHashConcurrency() } = hashing
  assert(isInteger(concurrency, 1, 1024), 'hashing.concurrency must be a whole number from 1 to 1024')
  const { maxQueue = 32 * concurrency } = hashing
  assert(isInteger(maxQueue, 0, 1_000_000), 'hashing.maxQueue must be a whole number from 0 to 1000000')
  return { concurrency, maxQueue }
}

export function resolveLegacyHashes (legacyHashes: unknown = []): readonly LegacyHashFormat[] {
  assert(Array.isArray(legacyHashes), 'legacyHashes must be an array of { name, test, verify }')
  const names = new Set<string>(BUILT_IN_FORMATS)
  legacyHashes.forEach((format: Partial<LegacyHashFormat> | null, index) => {
    const where = `legacyHashes[${index}]`
    assert(typeof format === 'object' && format !== null, `${where} must be an object { name, test, verify }`)
    assert(typeof format.name === 'string' && /^[\w.-]{1,64}$/.test(format.name), `${where}.name must be 1 to 64 letters, digits, _ . or -`)
    assert(!names.has(format.name), `${where}.name "${format.name}" is already taken`)
    assert(typeof format.test === 'function', `${where}.test must be a function (hash) => boolean`)
    assert(typeof format.verify === 'function', `${where}.verify must be a function (hash, password) => Promise<boolean>`)
    names.add(format.name)
  })
  return Object.freeze([...legacyHashes])
}
