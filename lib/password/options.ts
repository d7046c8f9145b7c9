import { availableParallelism } from 'node:os'
import type { FastifyBaseLogger } from 'fastify'
import type { EmitEvent } from '../common/events.js'
import { assert, group, isInteger, isObject } from '../common/option-rules.js'
import type { AccountReads } from '../stores/account-reads.js'
import type { AttemptThrottle } from '../throttle/attempt-throttle.js'
import { resolveArgon2, type Argon2Options, type Argon2Params } from './argon2-options.js'
import { attemptLeaseMs } from './attempt-lease.js'
import { createBreachCheck, resolveBreachedPasswords, type BreachCheck, type BreachedPasswordsOptions, type ResolvedBreachedPasswords } from './breach-options.js'
import { createPasswordCheck, type CheckPassword } from './credential-check.js'
import type { HashQueue } from './hash-queue.js'
import { BCRYPT_MODULE } from './legacy/bcrypt.js'
import { PasswordHasher } from './hasher.js'
import { leaseHashing } from './shared-hashing.js'
import { BUILT_IN_FORMATS, type LegacyHashFormat } from './legacy/index.js'
import { createPasswordPolicy, DEFAULT_PASSWORD_POLICY, type PasswordPolicy, type PasswordPolicyOptions, type ResolvedPasswordPolicy } from './policy.js'

/** The plugin options password/ reads. */
export interface PasswordPluginOptions {
  /** argon2id costs and pepper; `hashPassword(password, argon2)` takes the same object. */
  argon2?: Argon2Options
  passwordPolicy?: PasswordPolicyOptions
  hashing?: HashingOptions
  /**
   * Your own stored-hash formats, verified at login and then replaced by argon2id. Tried in order, after
   * argon2 and before the built-in bcrypt, scrypt and Django PBKDF2 formats.
   */
  legacyHashes?: LegacyHashFormat[]
  /**
   * After a successful Login, replace a legacy hash (or argon2 with weaker costs) by argon2id with the
   * configured costs (default true). `false` keeps every stored hash as it is, for as long as an older
   * system that cannot read argon2id still checks passwords against the same table.
   */
  upgradeHashes?: boolean
  /** A breached-password range service (contract §20); off by default. */
  breachedPasswords?: BreachedPasswordsOptions | false
}

export interface HashingOptions {
  /**
   * Threads of the plugin's own hashing pool, each running one argon2 hash or verification at a time
   * (and the built-in legacy formats); default `os.availableParallelism()`, every core. Each running hash
   * holds `argon2.memoryCost` (19 MiB by default) and each started thread about 12 MB more.
   */
  threads?: number
  /** Operations allowed to wait for a thread; beyond that every route that would hash answers 503 at once (default 32 × threads). */
  maxQueue?: number
}

const MAX_THREADS = 1024

/**
 * Hashing threads unless configured: one per core this process may run on. On Node 20 (libuv 1.46) that
 * ignores a container's CPU quota, which a host then passes as `hashing.threads`.
 */
export function defaultHashThreads (): number {
  return Math.min(availableParallelism(), MAX_THREADS)
}

export interface ResolvedPassword {
  argon2: Argon2Params
  pepper: Uint8Array | undefined
  policy: ResolvedPasswordPolicy
  hashing: Required<HashingOptions>
  legacyHashes: readonly LegacyHashFormat[]
  upgradeHashes: boolean
  /** How long an unsettled password attempt counts, from the hashing costs (password/attempt-lease.ts). */
  leaseMs: number
  breachedPasswords: ResolvedBreachedPasswords | undefined
}

/** `storeTimeout`: a password attempt waits for three store calls at most (attemptLeaseMs). */
export function resolvePassword (options: PasswordPluginOptions, storeTimeout: number): ResolvedPassword {
  const { upgradeHashes = true } = options
  assert(typeof upgradeHashes === 'boolean', 'upgradeHashes must be true or false')
  const { params: argon2, pepper } = resolveArgon2(options.argon2)
  const policy = resolvePasswordPolicy(options.passwordPolicy)
  const hashing = resolveHashing(options.hashing)
  const legacyHashes = resolveLegacyHashes(options.legacyHashes)
  const breachedPasswords = resolveBreachedPasswords(options.breachedPasswords)
  return { argon2, pepper, policy, hashing, legacyHashes, upgradeHashes, leaseMs: attemptLeaseMs({ storeTimeout, argon2, hashing }), breachedPasswords }
}

function resolvePasswordPolicy (policy: PasswordPolicyOptions | undefined): ResolvedPasswordPolicy {
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

function resolveHashing (options: HashingOptions | undefined): Required<HashingOptions> {
  // Hashes ran on libuv's pool, `concurrency` of them at once; each thread of the plugin's own runs one.
  assert(!isObject(options) || !Object.hasOwn(options, 'concurrency'), 'unknown option hashing.concurrency: did you mean hashing.threads?')
  const hashing = group(options, ['threads', 'maxQueue'], 'hashing')
  const { threads = defaultHashThreads() } = hashing
  assert(isInteger(threads, 1, MAX_THREADS), `hashing.threads must be a whole number from 1 to ${MAX_THREADS}`)
  const { maxQueue = 32 * threads } = hashing
  assert(isInteger(maxQueue, 0, 1_000_000), 'hashing.maxQueue must be a whole number from 0 to 1000000')
  return { threads, maxQueue }
}

function resolveLegacyHashes (legacyHashes: unknown = []): readonly LegacyHashFormat[] {
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

interface Parts {
  accounts: AccountReads
  throttle: AttemptThrottle
  emit: EmitEvent
  log: FastifyBaseLogger
}

export interface PasswordParts {
  /** Where every hash and verification waits for a thread: a full one sheds Login's context at once. */
  hashQueue: HashQueue
  /** Hashes on threads of its own; close() ends them (the plugin's onClose). */
  hasher: PasswordHasher
  policy: PasswordPolicy
  checkPassword: CheckPassword
  /** Whether a Login replaces a legacy or weaker hash (the upgradeHashes option). */
  upgradeHashes: boolean
  /** The range service's verdicts, when one is configured: the policy asks about new passwords, checkPassword about verified current ones. */
  breachCheck: BreachCheck | undefined
}

/**
 * The hasher, its threads and its queue (a slot per thread; both shared with registrations configured
 * alike: shared-hashing.ts), the policy, and the password check (one argon2 run, against a dummy hash when
 * there is no account). The first thread starts here and makes the dummy hash: if none can run, the
 * registration fails.
 */
export async function createPassword (resolved: ResolvedPassword, { accounts, throttle, emit, log }: Parts): Promise<PasswordParts> {
  const lease = leaseHashing({ ...resolved.hashing, workerData: { params: { ...resolved.argon2 }, pepper: resolved.pepper, bcryptModule: BCRYPT_MODULE }, log })
  const hashQueue = lease.queue
  const hasher = new PasswordHasher({ params: resolved.argon2, pepper: resolved.pepper, queue: hashQueue, legacyHashes: resolved.legacyHashes, log, sharedPool: lease })
  const breachCheck = resolved.breachedPasswords === undefined ? undefined : createBreachCheck(resolved.breachedPasswords, emit)
  const checkPassword = createPasswordCheck({ accounts, hasher, throttle, emit, dummyHash: await hasher.createDummyHash(), breachCheck })
  return { hashQueue, hasher, policy: createPasswordPolicy(resolved.policy, breachCheck), checkPassword, upgradeHashes: resolved.upgradeHashes, breachCheck }
}
