import type { FastifyRequest } from 'fastify'
import { invalidOption } from './errors.js'
import type { AuthEventHandler } from './events.js'
import { defaultHashConcurrency } from './hash-queue.js'
import { DEFAULT_ARGON2, type Argon2Params } from './password.js'
import type { PasswordPolicyOptions } from './password-policy.js'
import { MemoryAttemptStore } from './stores/memory-attempts.js'
import type { AccountStore, AttemptStore, RevocationStore, ThrottlePolicy } from './stores/types.js'
import type { JwtAlgorithm, TokenConfig } from './tokens.js'

export interface JwtOptions {
  /** HS256 secret, at least 32 bytes. */
  secret?: string | Buffer
  /** Default HS256; EdDSA and ES256 take `privateKey` and `publicKey` (PEM) instead of `secret`. */
  algorithm?: JwtAlgorithm
  privateKey?: string | Buffer
  publicKey?: string | Buffer
  /** `iss` claim, default 'fastify-password-auth'. */
  issuer?: string
  /** `aud` claim, default 'fastify-password-auth'. */
  audience?: string
  /** Token lifetime in seconds, default 900. */
  expiresIn?: number
}

export interface ThrottleOptions {
  /** Consecutive failures per e-mail before it is blocked (default 5). */
  freeFailures?: number
  /** First block in seconds (default 30), doubling with each further failure. */
  blockSeconds?: number
  /** Longest block in seconds (default 900). */
  maxBlockSeconds?: number
  /** Failures are forgotten this long after the last one or the end of the block (default 86400). */
  forgetAfterSeconds?: number
}

/** Per-IP limit of Login and ChangePassword together, applied with @fastify/rate-limit. */
export interface RateLimitOptions {
  /** Requests per window and IP address (default 100). */
  max?: number
  /** Milliseconds, or a string such as '1 minute' (default 60000). */
  timeWindow?: number | string
  /** An ioredis client, so that all instances share the counters. */
  redis?: object
  /** Key prefix in Redis (default 'fastify-password-auth:rate-limit:'). */
  nameSpace?: string
  /** What a client is (default its IP address, IPv6 by /64 subnet). */
  keyGenerator?: (request: FastifyRequest) => string | number | Promise<string | number>
  allowList?: string[] | ((request: FastifyRequest, key: string) => boolean | Promise<boolean>)
  ipv6Subnet?: number
}

export interface HashingOptions {
  /** argon2 operations running at once; default: cores + 1, at most the libuv thread pool size minus one. */
  concurrency?: number
  /** argon2 operations allowed to wait; beyond that Login and ChangePassword answer 503 (default 32 × concurrency). */
  maxQueue?: number
}

export interface PasswordAuthOptions {
  accounts: AccountStore
  revocations: RevocationStore
  /** Per-e-mail attempt counters; default in memory (share one store between instances). */
  attempts?: AttemptStore
  jwt: JwtOptions
  /** Route prefix, default '/Auth'. */
  prefix?: string
  /** `realm` of the WWW-Authenticate challenges, default 'fastify-password-auth'. */
  realm?: string
  argon2?: Partial<Argon2Params> & {
    /** Secret mixed into every hash (argon2 `secret`), kept outside the account store. */
    pepper?: string | Uint8Array
  }
  passwordPolicy?: PasswordPolicyOptions
  throttle?: ThrottleOptions
  /** Per-IP limit (default 100 per minute); `false` turns it off. */
  rateLimit?: RateLimitOptions | false
  hashing?: HashingOptions
  /** Milliseconds a store call may take before the request fails closed with 503 (default 2000). */
  storeTimeout?: number
  /** Receives every audit event. Errors it throws are logged and otherwise ignored. */
  onEvent?: AuthEventHandler
}

export interface ResolvedOptions {
  accounts: AccountStore
  revocations: RevocationStore
  attempts: AttemptStore
  token: TokenConfig
  prefix: string
  realm: string
  argon2: Argon2Params
  pepper: Uint8Array | undefined
  passwordPolicy: PasswordPolicyOptions
  throttle: ThrottlePolicy
  rateLimit: RateLimitOptions | false
  hashing: Required<HashingOptions>
  storeTimeout: number
  onEvent: AuthEventHandler | undefined
}

const DEFAULT_NAME = 'fastify-password-auth'
const MIN_SECRET_BYTES = 32
/** How long an attempt whose process died before settling it keeps counting. */
const ATTEMPT_LEASE_MS = 30_000

const STORE_METHODS = {
  accounts: ['findByEmail', 'findById', 'updatePasswordHash'],
  revocations: ['revoke', 'isRevoked'],
  attempts: ['reserve', 'settle']
} as const

function assert (condition: unknown, message: string): asserts condition {
  if (!condition) throw invalidOption(message)
}

function isInteger (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max
}

function checkStore (name: keyof typeof STORE_METHODS, store: unknown): void {
  assert(typeof store === 'object' && store !== null, `the "${name}" store is required`)
  for (const method of STORE_METHODS[name]) {
    assert(typeof (store as Record<string, unknown>)[method] === 'function', `the "${name}" store has no method ${method}()`)
  }
}

function checkHeaderText (value: unknown, name: string): asserts value is string {
  assert(typeof value === 'string' && /^[\x21\x23-\x5b\x5d-\x7e ]+$/.test(value),
    `${name} must be a non-empty string of printable ASCII without " or \\`)
}

function resolveToken (jwt: JwtOptions | undefined): TokenConfig {
  assert(typeof jwt === 'object' && jwt !== null, 'the "jwt" option is required, e.g. { secret: <at least 32 random bytes> }')
  const { algorithm = 'HS256', secret, privateKey, publicKey, issuer = DEFAULT_NAME, audience = DEFAULT_NAME, expiresIn = 900 } = jwt
  assert(['HS256', 'EdDSA', 'ES256'].includes(algorithm), 'jwt.algorithm must be one of HS256, EdDSA, ES256')
  let key: TokenConfig['key']
  if (algorithm === 'HS256') {
    assert(typeof secret === 'string' || Buffer.isBuffer(secret), 'jwt.secret is required for HS256 (at least 32 random bytes)')
    assert(Buffer.byteLength(secret) >= MIN_SECRET_BYTES, `jwt.secret must be at least ${MIN_SECRET_BYTES} bytes long`)
    key = { secret }
  } else {
    assert(secret === undefined, `jwt.secret is for HS256; ${algorithm} takes jwt.privateKey and jwt.publicKey`)
    assert(privateKey !== undefined && publicKey !== undefined, `jwt.privateKey and jwt.publicKey are required for ${algorithm}`)
    key = { privateKey, publicKey }
  }
  assert(typeof issuer === 'string' && issuer !== '', 'jwt.issuer must be a non-empty string')
  assert(typeof audience === 'string' && audience !== '', 'jwt.audience must be a non-empty string')
  assert(isInteger(expiresIn, 1, 86_400), 'jwt.expiresIn must be a whole number of seconds from 1 to 86400')
  return { algorithm, key, issuer, audience, expiresIn }
}

function resolveArgon2 (argon2: PasswordAuthOptions['argon2'] = {}): { params: Argon2Params, pepper: Uint8Array | undefined } {
  const { pepper, ...costs } = argon2
  const params = { ...DEFAULT_ARGON2, ...costs }
  assert(isInteger(params.parallelism, 1, 255), 'argon2.parallelism must be a whole number from 1 to 255')
  assert(isInteger(params.memoryCost, 8 * params.parallelism, 4_194_304), 'argon2.memoryCost must be KiB from 8 × parallelism to 4194304')
  assert(isInteger(params.timeCost, 1, 100), 'argon2.timeCost must be a whole number from 1 to 100')
  assert(pepper === undefined || typeof pepper === 'string' || pepper instanceof Uint8Array, 'argon2.pepper must be a string or a Uint8Array')
  assert(pepper === undefined || pepper.length > 0, 'argon2.pepper must not be empty')
  return { params, pepper: typeof pepper === 'string' ? Buffer.from(pepper) : pepper }
}

function resolvePolicy (policy: PasswordPolicyOptions = {}): PasswordPolicyOptions {
  const { minLength = 15, maxLength = 128, check } = policy
  assert(isInteger(minLength, 1, 1024), 'passwordPolicy.minLength must be a whole number from 1 to 1024')
  assert(isInteger(maxLength, minLength, 1024), 'passwordPolicy.maxLength must be a whole number from minLength to 1024')
  assert(check === undefined || typeof check === 'function', 'passwordPolicy.check must be a function')
  return { minLength, maxLength, check }
}

function resolveThrottle (throttle: ThrottleOptions = {}): ThrottlePolicy {
  const { freeFailures = 5, blockSeconds = 30, maxBlockSeconds = 900, forgetAfterSeconds = 86_400 } = throttle
  assert(isInteger(freeFailures, 1, 1000), 'throttle.freeFailures must be a whole number from 1 to 1000')
  assert(isInteger(blockSeconds, 1), 'throttle.blockSeconds must be a whole number of seconds, at least 1')
  assert(isInteger(maxBlockSeconds, blockSeconds), 'throttle.maxBlockSeconds must be a whole number of seconds, at least blockSeconds')
  assert(isInteger(forgetAfterSeconds, 1), 'throttle.forgetAfterSeconds must be a whole number of seconds, at least 1')
  return {
    freeFailures,
    blockMs: blockSeconds * 1000,
    maxBlockMs: maxBlockSeconds * 1000,
    leaseMs: ATTEMPT_LEASE_MS,
    forgetAfterMs: forgetAfterSeconds * 1000
  }
}

function resolveHashing (hashing: HashingOptions = {}): Required<HashingOptions> {
  const { concurrency = defaultHashConcurrency() } = hashing
  assert(isInteger(concurrency, 1, 1024), 'hashing.concurrency must be a whole number from 1 to 1024')
  const { maxQueue = 32 * concurrency } = hashing
  assert(isInteger(maxQueue, 0, 1_000_000), 'hashing.maxQueue must be a whole number from 0 to 1000000')
  return { concurrency, maxQueue }
}

/** Checks every option and fills in the defaults; a mistake throws FST_PWAUTH_INVALID_OPTION. */
export function resolveOptions (options: PasswordAuthOptions): ResolvedOptions {
  checkStore('accounts', options.accounts)
  checkStore('revocations', options.revocations)
  if (options.attempts !== undefined) checkStore('attempts', options.attempts)

  const { prefix = '/Auth', realm = DEFAULT_NAME, rateLimit = {}, storeTimeout = 2000, onEvent } = options
  assert(typeof prefix === 'string' && (prefix === '' || /^\/[^\s?#]*[^/\s?#]$/.test(prefix)),
    'prefix must be empty or a path starting with / and not ending with /')
  checkHeaderText(realm, 'realm')
  assert(rateLimit === false || (typeof rateLimit === 'object' && rateLimit !== null), 'rateLimit must be an object or false')
  assert(isInteger(storeTimeout, 1, 60_000), 'storeTimeout must be a whole number of milliseconds from 1 to 60000')
  assert(onEvent === undefined || typeof onEvent === 'function', 'onEvent must be a function')
  const { params, pepper } = resolveArgon2(options.argon2)

  return {
    accounts: options.accounts,
    revocations: options.revocations,
    attempts: options.attempts ?? new MemoryAttemptStore(),
    token: resolveToken(options.jwt),
    prefix,
    realm,
    argon2: params,
    pepper,
    passwordPolicy: resolvePolicy(options.passwordPolicy),
    throttle: resolveThrottle(options.throttle),
    rateLimit: rateLimit === false ? false : { max: 100, timeWindow: 60_000, nameSpace: `${DEFAULT_NAME}:rate-limit:`, ...rateLimit },
    hashing: resolveHashing(options.hashing),
    storeTimeout,
    onEvent
  }
}
