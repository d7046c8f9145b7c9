import type { FastifyRequest } from 'fastify'
import type { AuthEventHandler } from '../events.js'
import { DECORATOR_OPTION_KEYS, resolveDecorators, type DecoratorOptions, type ResolvedDecorators } from '../guard/decorators.js'
import { BUILT_IN_FORMATS, type LegacyHashFormat } from '../password/legacy/index.js'
import { defaultHashConcurrency } from '../password/hash-queue.js'
import { resolveKeys, type JwtKey, type ResolvedKey } from '../tokens/keys.js'
import { ARGON2_OPTION_KEYS, resolveArgon2, type Argon2Options, type Argon2Params } from '../password/argon2-options.js'
import { assert, checkKnownKeys, isInteger, isObject } from './rules.js'
import { DEFAULT_PASSWORD_POLICY, type PasswordPolicyOptions, type ResolvedPasswordPolicy } from '../password/policy.js'
import { MemoryAttemptStore } from '../stores/memory/attempts.js'
import { MemorySessionStore } from '../stores/memory/sessions.js'
import type { AccountStore, AttemptStore, SessionPolicy, SessionStore, ThrottlePolicy } from '../stores/types.js'
import type { AccessTokenConfig } from '../tokens/access-tokens.js'

export interface JwtOptions extends JwtKey {
  /**
   * Several keys, for rotation: the first signs, every one verifies the tokens whose `kid` names it.
   * Instead of `secret` / `algorithm` / `privateKey` / `publicKey` / `kid` (one key).
   */
  keys?: JwtKey[]
  /** `iss` claim, default 'fastify-password-auth'. */
  issuer?: string
  /** `aud` claim, default 'fastify-password-auth'. */
  audience?: string
  /** Access-token lifetime in seconds, default 900. */
  expiresIn?: number
  /**
   * Publishes the public keys of EdDSA / ES256 keys as a JWKS document at this path (e.g.
   * '/.well-known/jwks.json'), for services that verify tokens themselves. Default: not published.
   */
  jwksPath?: string
}

export interface RefreshOptions {
  /** Seconds a session may go without a refresh before it ends (default 604800, 7 days). */
  idleTimeout?: number
  /** Seconds after Login at which a session ends, whatever happens (default 2592000, 30 days). */
  maxLifetime?: number
  /** Seconds during which a replaced refresh token still gets the grace answer (default 10). */
  grace?: number
  /** Puts the refresh token in an HttpOnly cookie instead of the body (needs @fastify/cookie). Default false. */
  cookie?: boolean | { name?: string }
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
  /** Sessions; default in memory (share one store between instances). */
  sessions?: SessionStore
  /** Per-e-mail attempt counters; default in memory (share one store between instances). */
  attempts?: AttemptStore
  jwt: JwtOptions
  /** Refresh tokens (on by default); `false` turns them off, and a session is then one access token. */
  refresh?: RefreshOptions | false
  /** Route prefix, default '/Auth'. */
  prefix?: string
  /** `realm` of the WWW-Authenticate challenges, default 'fastify-password-auth'. */
  realm?: string
  /** argon2id costs and pepper; `hashPassword(password, argon2)` takes the same object. */
  argon2?: Argon2Options
  passwordPolicy?: PasswordPolicyOptions
  throttle?: ThrottleOptions
  /** Per-IP limit (default 100 per minute); `false` turns it off. */
  rateLimit?: RateLimitOptions | false
  hashing?: HashingOptions
  /**
   * Your own stored-hash formats, verified at login and then replaced by argon2id. Tried in order, after
   * argon2 and before the built-in bcrypt, scrypt and Django PBKDF2 formats.
   */
  legacyHashes?: LegacyHashFormat[]
  /** Milliseconds a store call may take before the request fails closed with 503 (default 2000). */
  storeTimeout?: number
  /** Receives every audit event. Errors it throws are logged and otherwise ignored. */
  onEvent?: AuthEventHandler
  /** Other names for the plugin's decorators, when the host already uses `authenticate` or `request.account`. */
  decorators?: DecoratorOptions
}

export interface ResolvedRefresh {
  enabled: boolean
  policy: SessionPolicy
  /** The refresh token's cookie name in cookie mode. */
  cookie: string | undefined
}

export interface ResolvedOptions {
  accounts: AccountStore
  sessions: SessionStore
  attempts: AttemptStore
  keys: ResolvedKey[]
  accessToken: AccessTokenConfig
  jwksPath: string | undefined
  refresh: ResolvedRefresh
  prefix: string
  realm: string
  argon2: Argon2Params
  pepper: Uint8Array | undefined
  passwordPolicy: ResolvedPasswordPolicy
  /** leaseMs is derived from the other options (attemptLeaseMs in throttle.ts). */
  throttle: Omit<ThrottlePolicy, 'leaseMs'>
  rateLimit: RateLimitOptions | false
  hashing: Required<HashingOptions>
  legacyHashes: readonly LegacyHashFormat[]
  storeTimeout: number
  onEvent: AuthEventHandler | undefined
  decorators: ResolvedDecorators
}

const DEFAULT_NAME = 'fastify-password-auth'

const KNOWN = {
  options: [
    'accounts', 'sessions', 'attempts', 'jwt', 'refresh', 'prefix', 'realm', 'argon2', 'legacyHashes', 'passwordPolicy', 'throttle', 'rateLimit',
    'hashing', 'storeTimeout', 'onEvent', 'decorators'
  ],
  jwt: ['secret', 'algorithm', 'privateKey', 'publicKey', 'kid', 'keys', 'issuer', 'audience', 'expiresIn', 'jwksPath'],
  refresh: ['idleTimeout', 'maxLifetime', 'grace', 'cookie'],
  cookie: ['name'],
  argon2: ARGON2_OPTION_KEYS,
  passwordPolicy: ['minLength', 'maxLength', 'check'],
  throttle: ['freeFailures', 'blockSeconds', 'maxBlockSeconds', 'forgetAfterSeconds'],
  rateLimit: ['max', 'timeWindow', 'redis', 'nameSpace', 'keyGenerator', 'allowList', 'ipv6Subnet'],
  hashing: ['concurrency', 'maxQueue'],
  decorators: DECORATOR_OPTION_KEYS
} as const

/** Options of earlier versions: the old name points at its successor, whatever the spelling distance says. */
const RENAMED = { revocations: 'sessions' }

const STORE_METHODS = {
  accounts: ['findByEmail', 'findById', 'updatePasswordHash'],
  sessions: ['create', 'get', 'rotate', 'end', 'endAll', 'list'],
  attempts: ['reserve', 'settle']
} as const

/** An optional group of options: absent is {}, anything but an object is a mistake, unknown keys too. */
function group<T> (value: T | undefined, known: keyof typeof KNOWN, where: string = known): T {
  if (value === undefined) return {} as T
  assert(isObject(value), `${where} must be an object`)
  checkKnownKeys(value, KNOWN[known], where)
  return value
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

function checkPath (value: unknown, name: string, allowEmpty: boolean): asserts value is string {
  assert(typeof value === 'string' && ((allowEmpty && value === '') || /^\/[^\s?#]*[^/\s?#]$/.test(value)),
    `${name} must be ${allowEmpty ? 'empty or ' : ''}a path starting with / and not ending with /`)
}

function resolveJwt (jwt: JwtOptions | undefined): { keys: ResolvedKey[], accessToken: AccessTokenConfig, jwksPath: string | undefined } {
  assert(isObject(jwt), 'the "jwt" option is required, e.g. { secret: <at least 32 random bytes> }')
  checkKnownKeys(jwt, KNOWN.jwt, 'jwt')
  const { keys, issuer = DEFAULT_NAME, audience = DEFAULT_NAME, expiresIn = 900, jwksPath, ...single } = jwt
  let resolved: ResolvedKey[]
  if (keys === undefined) {
    resolved = resolveKeys([{ key: single, where: 'jwt' }])
  } else {
    assert(Object.keys(single).length === 0, 'jwt.keys replaces jwt.secret, algorithm, privateKey, publicKey and kid: give one or the other')
    assert(Array.isArray(keys) && keys.length > 0, 'jwt.keys must be a non-empty array')
    resolved = resolveKeys(keys.map((key, index) => ({ key, where: `jwt.keys[${index}]` })))
  }
  assert(typeof issuer === 'string' && issuer !== '', 'jwt.issuer must be a non-empty string')
  assert(typeof audience === 'string' && audience !== '', 'jwt.audience must be a non-empty string')
  assert(isInteger(expiresIn, 1, 86_400), 'jwt.expiresIn must be a whole number of seconds from 1 to 86400')
  if (jwksPath !== undefined) {
    checkPath(jwksPath, 'jwt.jwksPath', false)
    assert(resolved.some((key) => key.publicJwk !== undefined), 'jwt.jwksPath publishes public keys, and HS256 secrets have none: use EdDSA or ES256 keys')
  }
  return { keys: resolved, accessToken: { issuer, audience, expiresIn }, jwksPath }
}

const COOKIE_NAME = /^[!#$%&'*+.^\w`|~-]{1,64}$/

function resolveRefresh (refresh: RefreshOptions | false | undefined, accessTokenSeconds: number): ResolvedRefresh {
  if (refresh === false) {
    // A session is its one access token: it ends when the token expires.
    const lifetime = accessTokenSeconds * 1000
    return { enabled: false, policy: { idleMs: lifetime, maxMs: lifetime, graceMs: 0 }, cookie: undefined }
  }
  const { idleTimeout = 604_800, maxLifetime = 2_592_000, grace = 10, cookie = false } = group(refresh, 'refresh')
  assert(isInteger(maxLifetime, 60, 400 * 86_400), 'refresh.maxLifetime must be a whole number of seconds from 60 to 34560000 (400 days)')
  assert(isInteger(idleTimeout, 60, maxLifetime), 'refresh.idleTimeout must be a whole number of seconds from 60 to refresh.maxLifetime')
  assert(isInteger(grace, 0, 300), 'refresh.grace must be a whole number of seconds from 0 to 300')
  assert(typeof cookie === 'boolean' || isObject(cookie), 'refresh.cookie must be true, false or { name }')
  let cookieName: string | undefined
  if (cookie !== false) {
    const { name = 'fastify-password-auth-refresh' } = cookie === true ? {} : group(cookie, 'cookie', 'refresh.cookie')
    assert(typeof name === 'string' && COOKIE_NAME.test(name), 'refresh.cookie.name must be a cookie name: 1 to 64 letters, digits and !#$%&\'*+.^_`|~-')
    cookieName = name
  }
  return { enabled: true, policy: { idleMs: idleTimeout * 1000, maxMs: maxLifetime * 1000, graceMs: grace * 1000 }, cookie: cookieName }
}

function resolvePolicy (policy: PasswordPolicyOptions | undefined): ResolvedPasswordPolicy {
  const { minLength = DEFAULT_PASSWORD_POLICY.minLength, maxLength = DEFAULT_PASSWORD_POLICY.maxLength, check } = group(policy, 'passwordPolicy')
  assert(isInteger(minLength, 1, 1024), 'passwordPolicy.minLength must be a whole number from 1 to 1024')
  assert(isInteger(maxLength, minLength, 1024), 'passwordPolicy.maxLength must be a whole number from minLength to 1024')
  assert(check === undefined || typeof check === 'function', 'passwordPolicy.check must be a function')
  return { minLength, maxLength, check }
}

function resolveThrottle (throttle: ThrottleOptions | undefined): Omit<ThrottlePolicy, 'leaseMs'> {
  const { freeFailures = 5, blockSeconds = 30, maxBlockSeconds = 900, forgetAfterSeconds = 86_400 } = group(throttle, 'throttle')
  assert(isInteger(freeFailures, 1, 1000), 'throttle.freeFailures must be a whole number from 1 to 1000')
  assert(isInteger(blockSeconds, 1), 'throttle.blockSeconds must be a whole number of seconds, at least 1')
  assert(isInteger(maxBlockSeconds, blockSeconds), 'throttle.maxBlockSeconds must be a whole number of seconds, at least blockSeconds')
  assert(isInteger(forgetAfterSeconds, 1), 'throttle.forgetAfterSeconds must be a whole number of seconds, at least 1')
  return {
    freeFailures,
    blockMs: blockSeconds * 1000,
    maxBlockMs: maxBlockSeconds * 1000,
    forgetAfterMs: forgetAfterSeconds * 1000
  }
}

function resolveHashing (options: HashingOptions | undefined): Required<HashingOptions> {
  const hashing = group(options, 'hashing')
  const { concurrency = defaultHashConcurrency() } = hashing
  assert(isInteger(concurrency, 1, 1024), 'hashing.concurrency must be a whole number from 1 to 1024')
  const { maxQueue = 32 * concurrency } = hashing
  assert(isInteger(maxQueue, 0, 1_000_000), 'hashing.maxQueue must be a whole number from 0 to 1000000')
  return { concurrency, maxQueue }
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

/** Checks every option and fills in the defaults; a mistake throws FST_PWAUTH_INVALID_OPTION. */
export function resolveOptions (options: PasswordAuthOptions): ResolvedOptions {
  assert(isObject(options), 'the options are required, e.g. { accounts, jwt: { secret } }')
  for (const [before, now] of Object.entries(RENAMED)) assert(!Object.hasOwn(options, before), `unknown option ${before}: did you mean ${now}?`)
  checkKnownKeys(options, KNOWN.options, '')
  checkStore('accounts', options.accounts)
  if (options.sessions !== undefined) checkStore('sessions', options.sessions)
  if (options.attempts !== undefined) checkStore('attempts', options.attempts)

  const { prefix = '/Auth', realm = DEFAULT_NAME, rateLimit = {}, storeTimeout = 2000, onEvent } = options
  checkPath(prefix, 'prefix', true)
  checkHeaderText(realm, 'realm')
  assert(rateLimit === false || isObject(rateLimit), 'rateLimit must be an object or false')
  if (rateLimit !== false) checkKnownKeys(rateLimit, KNOWN.rateLimit, 'rateLimit')
  assert(isInteger(storeTimeout, 1, 60_000), 'storeTimeout must be a whole number of milliseconds from 1 to 60000')
  assert(onEvent === undefined || typeof onEvent === 'function', 'onEvent must be a function')
  const { params, pepper } = resolveArgon2(options.argon2)
  const jwt = resolveJwt(options.jwt)

  return {
    accounts: options.accounts,
    sessions: options.sessions ?? new MemorySessionStore(),
    attempts: options.attempts ?? new MemoryAttemptStore(),
    ...jwt,
    refresh: resolveRefresh(options.refresh, jwt.accessToken.expiresIn),
    prefix,
    realm,
    argon2: params,
    pepper,
    passwordPolicy: resolvePolicy(options.passwordPolicy),
    throttle: resolveThrottle(options.throttle),
    rateLimit: rateLimit === false ? false : { max: 100, timeWindow: 60_000, nameSpace: `${DEFAULT_NAME}:rate-limit:`, ...rateLimit },
    hashing: resolveHashing(options.hashing),
    legacyHashes: resolveLegacyHashes(options.legacyHashes),
    storeTimeout,
    onEvent,
    decorators: resolveDecorators(group(options.decorators, 'decorators'))
  }
}
