import { Kind } from '@sinclair/typebox'
import type { AuthEventHandler } from './common/events.js'
import { DECORATOR_OPTION_KEYS, resolveDecorators, type DecoratorOptions, type ResolvedDecorators } from './guard/decorators.js'
import { resolveArgon2, type Argon2Options, type Argon2Params } from './password/argon2-options.js'
import type { LegacyHashFormat } from './password/legacy/index.js'
import { resolveHashing, resolveLegacyHashes, resolvePasswordPolicy, type HashingOptions } from './password/options.js'
import type { PasswordPolicyOptions, ResolvedPasswordPolicy } from './password/policy.js'
import { resolveReauthMaxAge, resolveRefresh, type RefreshOptions, type ResolvedRefresh } from './session/options.js'
import { MemoryAttemptStore } from './stores/memory/attempts.js'
import { MemorySessionStore } from './stores/memory/sessions.js'
import type { DeliverMessage } from './messages/outbox.js'
import { MemoryMfaStore } from './stores/memory/mfa.js'
import { MemoryOneTimeTokenStore } from './stores/memory/one-time-tokens.js'
import type { AccountStore, AttemptStore, MfaStore, OneTimeTokenStore, SessionStore, ThrottlePolicy } from './stores/types.js'
import { resolveDeviceTtl, resolveRateLimit, resolveThrottle, type RateLimitOptions, type ThrottleOptions } from './throttle/options.js'
import type { AccessTokenConfig } from './tokens/access-tokens.js'
import type { ResolvedKey } from './tokens/keys.js'
import { resolveJwt, type JwtOptions } from './tokens/options.js'
import { assert, checkHeaderText, checkKnownKeys, checkPath, group, isInteger, isObject, PLUGIN_NAME } from './common/option-rules.js'

// Each concern resolves and checks its own options beside the code that uses them (tokens/, session/,
// password/, throttle/, guard/); this module checks the top level and puts them together.
export type { HashingOptions, JwtOptions, RateLimitOptions, RefreshOptions, ThrottleOptions }

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
  /**
   * After a successful Login, replace a legacy hash (or argon2 with weaker costs) by argon2id with the
   * configured costs (default true). `false` keeps every stored hash as it is, for as long as an older
   * system that cannot read argon2id still checks passwords against the same table.
   */
  upgradeHashes?: boolean
  /** Milliseconds a store call may take before the request fails closed with 503 (default 2000). */
  storeTimeout?: number
  /** Receives every audit event. Errors it throws are logged and otherwise ignored. */
  onEvent?: AuthEventHandler
  /** Other names for the plugin's decorators, when the host already uses `authenticate` or `request.account`. */
  decorators?: DecoratorOptions
  /**
   * The routes that let users see and end their own sessions and prove their password again:
   * POST /Reauthenticate, GET /Sessions, DELETE /Sessions/:id, POST /Sessions/EndOthers. Default false.
   */
  sessionRoutes?: boolean
  /** Seconds a password proof counts as recent for ending sessions (default 300). */
  reauthMaxAge?: number
  /**
   * Sends the plugin's messages (a reset link, "your password was changed"): called after the answer,
   * from a bounded queue; what it throws is logged and reported, never retried. Links are yours to build
   * from your own configured address.
   */
  deliver?: DeliverMessage
  /** POST /ForgotPassword and POST /ResetPassword (default false); needs `deliver`. */
  passwordReset?: boolean
  /** Seconds a reset token lives (default 1800). */
  resetTtl?: number
  /** Messages per address per hour, over every route that sends one (default 5); above it nothing is sent, silently. */
  mailLimit?: number
  /** One-time tokens (reset links, pending registrations); default in memory (share one store between instances). */
  oneTimeTokens?: OneTimeTokenStore
  /**
   * POST /Register and POST /VerifyEmail (default false); needs `deliver` and an account store with
   * create(). `{ fields }` adds fields of yours to Register's body: TypeBox schemas (`Type.String(…)` from
   * @sinclair/typebox), each required, validated like the built-in ones, and handed to the store's create().
   */
  registration?: boolean | { fields?: Record<string, object> }
  /** Seconds a verification link lives (default 86400). */
  verifyTtl?: number
  /**
   * Two factors (default false): TOTP and recovery codes, the routes LoginMfa and Mfa/Setup, Confirm,
   * RecoveryCodes, Disable. `issuer` is the name authenticator apps show (default the realm).
   */
  mfa?: boolean | { issuer?: string }
  /** Seconds a Login's second-factor challenge (mfaToken) lives (default 300). */
  mfaTtl?: number
  /** Second factors (sealed TOTP secrets, hashed recovery codes); default in memory (share one store between instances). */
  mfaStore?: MfaStore
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
  /** leaseMs is derived from the other options (attemptLeaseMs in password/attempt-lease.ts). */
  throttle: Omit<ThrottlePolicy, 'leaseMs'>
  /** Seconds a device token lasts (throttle.deviceTtl). */
  deviceTtl: number
  rateLimit: RateLimitOptions | false
  hashing: Required<HashingOptions>
  legacyHashes: readonly LegacyHashFormat[]
  upgradeHashes: boolean
  storeTimeout: number
  onEvent: AuthEventHandler | undefined
  decorators: ResolvedDecorators
  sessionRoutes: boolean
  reauthMaxAge: number
  deliver: DeliverMessage | undefined
  /** Reset tokens' lifetime in ms, when ForgotPassword and ResetPassword are on. */
  passwordReset: { ttlMs: number } | undefined
  registration: { ttlMs: number, fields: Record<string, object> } | undefined
  mailLimit: number
  oneTimeTokens: OneTimeTokenStore
  /** Two factors, when on: the otpauth issuer and a challenge's lifetime. */
  mfa: { issuer: string, ttlMs: number } | undefined
  mfaStore: MfaStore
}

const OPTION_KEYS = [
  'accounts', 'sessions', 'attempts', 'jwt', 'refresh', 'prefix', 'realm', 'argon2', 'legacyHashes', 'upgradeHashes', 'passwordPolicy', 'throttle', 'rateLimit',
  'hashing', 'storeTimeout', 'onEvent', 'decorators', 'sessionRoutes', 'reauthMaxAge', 'deliver', 'passwordReset', 'resetTtl', 'mailLimit', 'oneTimeTokens',
  'registration', 'verifyTtl', 'mfa', 'mfaTtl', 'mfaStore'
]

/** Options of earlier versions: the old name points at its successor, whatever the spelling distance says. */
const RENAMED = { revocations: 'sessions' }

const STORE_METHODS = {
  accounts: ['findByEmail', 'findById', 'updatePasswordHash'],
  sessions: ['create', 'get', 'rotate', 'reauthenticate', 'end', 'endAll', 'list'],
  attempts: ['reserve', 'settle'],
  oneTimeTokens: ['put', 'find', 'consume'],
  mfaStore: ['get', 'begin', 'enable', 'acceptStep', 'useRecoveryCode', 'replaceRecoveryCodes', 'disable']
} as const

function checkStore (name: keyof typeof STORE_METHODS, store: unknown): void {
  assert(typeof store === 'object' && store !== null, `the "${name}" store is required`)
  for (const method of STORE_METHODS[name]) {
    assert(typeof (store as Record<string, unknown>)[method] === 'function', `the "${name}" store has no method ${method}()`)
  }
}

/** Names Register's body and the account already use: the host's fields take others. */
const TAKEN_FIELD_NAMES = new Set(['email', 'password', 'confirmPassword', 'id', 'active', 'credentialVersion', 'passwordHash', '__proto__', 'constructor'])

function resolveRegistration (registration: unknown = false, verifyTtl: unknown = 86_400, deliver: unknown, accounts: AccountStore): ResolvedOptions['registration'] {
  assert(typeof registration === 'boolean' || isObject(registration), 'registration must be true, false or { fields }')
  assert(isInteger(verifyTtl, 1, 30 * 86_400), 'verifyTtl must be a whole number of seconds from 1 to 2592000 (30 days)')
  if (registration === false) return undefined
  assert(deliver !== undefined, 'registration needs deliver: the plugin has no other way to send the verification link')
  assert(typeof accounts.create === 'function', 'registration needs an account store with create() (MemoryAccountStore and PostgresAccountStore have it)')
  const { fields = {} } = registration === true ? {} : group(registration, ['fields'], 'registration')
  assert(isObject(fields), 'registration.fields must be an object of TypeBox schemas')
  for (const [name, schema] of Object.entries(fields)) {
    assert(/^[A-Za-z_][\w]{0,63}$/.test(name) && !TAKEN_FIELD_NAMES.has(name), `registration.fields.${name}: the name is taken or not a plain identifier`)
    // The plugin's validator compiles TypeBox schemas: a plain JSON Schema would fail only at ready().
    assert(isObject(schema) && Kind in schema, `registration.fields.${name} must be a TypeBox schema, e.g. Type.String({ maxLength: 80 }) from @sinclair/typebox`)
  }
  return { ttlMs: verifyTtl * 1000, fields: fields as Record<string, object> }
}

function resolveMfa (mfa: unknown = false, mfaTtl: unknown = 300, realm: string): ResolvedOptions['mfa'] {
  assert(typeof mfa === 'boolean' || isObject(mfa), 'mfa must be true, false or { issuer }')
  assert(isInteger(mfaTtl, 30, 3600), 'mfaTtl must be a whole number of seconds from 30 to 3600')
  if (mfa === false) return undefined
  const { issuer = realm } = mfa === true ? {} : group(mfa, ['issuer'], 'mfa')
  assert(typeof issuer === 'string' && issuer.trim() !== '' && issuer.length <= 100 && !issuer.includes(':'),
    'mfa.issuer must be a name of 1 to 100 characters without ":" (authenticator apps show it)')
  return { issuer, ttlMs: mfaTtl * 1000 }
}

/** Checks every option and fills in the defaults; a mistake throws FST_PWAUTH_INVALID_OPTION. */
export function resolveOptions (options: PasswordAuthOptions): ResolvedOptions {
  assert(isObject(options), 'the options are required, e.g. { accounts, jwt: { secret } }')
  for (const [before, now] of Object.entries(RENAMED)) assert(!Object.hasOwn(options, before), `unknown option ${before}: did you mean ${now}?`)
  checkKnownKeys(options, OPTION_KEYS, '')
  checkStore('accounts', options.accounts)
  if (options.sessions !== undefined) checkStore('sessions', options.sessions)
  if (options.attempts !== undefined) checkStore('attempts', options.attempts)
  if (options.oneTimeTokens !== undefined) checkStore('oneTimeTokens', options.oneTimeTokens)
  if (options.mfaStore !== undefined) checkStore('mfaStore', options.mfaStore)

  const { prefix = '/Auth', realm = PLUGIN_NAME, storeTimeout = 2000, onEvent } = options
  checkPath(prefix, 'prefix', true)
  checkHeaderText(realm, 'realm')
  assert(isInteger(storeTimeout, 1, 60_000), 'storeTimeout must be a whole number of milliseconds from 1 to 60000')
  assert(onEvent === undefined || typeof onEvent === 'function', 'onEvent must be a function')
  const { sessionRoutes = false, upgradeHashes = true } = options
  assert(typeof sessionRoutes === 'boolean', 'sessionRoutes must be true or false')
  assert(typeof upgradeHashes === 'boolean', 'upgradeHashes must be true or false')
  const { deliver, passwordReset = false, resetTtl = 1800, mailLimit = 5 } = options
  assert(deliver === undefined || typeof deliver === 'function', 'deliver must be a function (message) => void | Promise<void>')
  assert(typeof passwordReset === 'boolean', 'passwordReset must be true or false')
  assert(!passwordReset || deliver !== undefined, 'passwordReset needs deliver: the plugin has no other way to send the reset link')
  assert(isInteger(resetTtl, 1, 86_400), 'resetTtl must be a whole number of seconds from 1 to 86400')
  assert(isInteger(mailLimit, 1, 1000), 'mailLimit must be a whole number from 1 to 1000')
  const registration = resolveRegistration(options.registration, options.verifyTtl, deliver, options.accounts)
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
    passwordPolicy: resolvePasswordPolicy(options.passwordPolicy),
    throttle: resolveThrottle(options.throttle),
    deviceTtl: resolveDeviceTtl(options.throttle),
    rateLimit: resolveRateLimit(options.rateLimit),
    hashing: resolveHashing(options.hashing),
    legacyHashes: resolveLegacyHashes(options.legacyHashes),
    upgradeHashes,
    storeTimeout,
    onEvent,
    decorators: resolveDecorators(group(options.decorators, DECORATOR_OPTION_KEYS, 'decorators')),
    sessionRoutes,
    reauthMaxAge: resolveReauthMaxAge(options.reauthMaxAge),
    deliver,
    passwordReset: passwordReset ? { ttlMs: resetTtl * 1000 } : undefined,
    registration,
    mailLimit,
    oneTimeTokens: options.oneTimeTokens ?? new MemoryOneTimeTokenStore(),
    mfa: resolveMfa(options.mfa, options.mfaTtl, realm),
    mfaStore: options.mfaStore ?? new MemoryMfaStore()
  }
}
