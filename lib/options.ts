import { ACCOUNT_KEYS, resolveAccount, type AccountPluginOptions, type ResolvedAccount } from './account/options.js'
import type { AuthEventHandler } from './common/events.js'
import { applyAliases } from './common/option-aliases.js'
import { invalidOption } from './common/errors.js'
import { assert, checkHeaderText, checkKnownKeys, isInteger, isObject, PLUGIN_NAME } from './common/option-rules.js'
import { resolveGuard, type GuardPluginOptions, type ResolvedDecorators } from './guard/options.js'
import { resolveMessages, type MessagesPluginOptions, type ResolvedMessages } from './messages/options.js'
import { MFA_OPTION_KEYS, resolveMfa, type MfaPluginOptions, type ResolvedMfa } from './mfa/options.js'
import { PASSKEYS_OPTION_KEYS, resolvePasskeys, type PasskeysPluginOptions, type ResolvedPasskeys } from './passkeys/options.js'
import { resolvePassword, type HashingOptions, type PasswordPluginOptions, type ResolvedPassword } from './password/options.js'
import { PASSWORD_RESET_KEYS, REGISTRATION_KEYS, resolveRoutes, type ResolvedRoutes, type RoutesPluginOptions } from './routes/options.js'
import { resolveSessions, type RefreshOptions, type ResolvedSessions, type SessionPluginOptions } from './session/options.js'
import { checkStore } from './stores/check-store.js'
import { MemoryAttemptStore } from './stores/memory/attempts.js'
import { MemoryMfaStore } from './stores/memory/mfa.js'
import { MemoryOneTimeTokenStore } from './stores/memory/one-time-tokens.js'
import { MemoryPasskeyStore } from './stores/memory/passkeys.js'
import { MemorySessionStore } from './stores/memory/sessions.js'
import { MemoryTrustedDeviceStore } from './stores/memory/trusted-devices.js'
import { isProcessLocal } from './stores/process-local.js'
import type { AccountStore, MfaStore, PasskeyStore } from './stores/types.js'
import { resolveThrottle, THROTTLE_OPTION_KEYS, type RateLimitOptions, type ResolvedThrottle, type ThrottleOptions, type ThrottlePluginOptions } from './throttle/options.js'
import { JWT_OPTION_KEYS, resolveTokens, type JwtOptions, type ResolvedTokens, type TokensPluginOptions } from './tokens/options.js'

export type { HashingOptions, JwtOptions, RateLimitOptions, RefreshOptions, ThrottleOptions }

/**
 * The plugin's options. Each room declares, checks and builds the ones it reads at its own door
 * (`<room>/options.ts`); the few every room shares are here.
 */
export interface PasswordAuthOptions extends TokensPluginOptions, SessionPluginOptions, PasswordPluginOptions, ThrottlePluginOptions,
  RoutesPluginOptions, MessagesPluginOptions, MfaPluginOptions, GuardPluginOptions, AccountPluginOptions, PasskeysPluginOptions, DeprecatedOptions {
  accounts: AccountStore
  /** `realm` of the WWW-Authenticate challenges, default 'fastify-password-auth'. */
  realm?: string
  /** Milliseconds a store call may take before the request fails closed with 503 (default 2000). */
  storeTimeout?: number
  /** Receives every audit event. Errors it throws are logged and otherwise ignored. */
  onEvent?: AuthEventHandler
}

/**
 * The flat names of earlier versions, which the HTTP contract (§13–§19) still uses: each is read as its place in its
 * feature's group (it does not turn the feature on), warns once per process, and is refused beside that place.
 */
export interface DeprecatedOptions {
  /** @deprecated Use `mfa: { ttl }`. */
  mfaTtl?: number
  /** @deprecated Use `mfa: { store }`. */
  mfaStore?: MfaStore
  /** @deprecated Use `passkeys: { ttl }`. */
  passkeyTtl?: number
  /** @deprecated Use `passkeys: { store }`. */
  passkeyStore?: PasskeyStore
  /** @deprecated Use `passwordReset: { ttl }`. */
  resetTtl?: number
  /** @deprecated Use `registration: { ttl }` for Register's link and `account: { verifyTtl }` for ChangeEmail's (this sets both). */
  verifyTtl?: number
}

/** Every option checked, with its defaults: the shared ones, then each room's. */
export interface ResolvedOptions {
  accounts: AccountStore
  realm: string
  storeTimeout: number
  onEvent: AuthEventHandler | undefined
  messages: ResolvedMessages
  routes: ResolvedRoutes
  password: ResolvedPassword
  tokens: ResolvedTokens
  sessions: ResolvedSessions
  throttle: ResolvedThrottle
  decorators: ResolvedDecorators
  /** Undefined while two factors are off. */
  mfa: ResolvedMfa | undefined
  account: ResolvedAccount
  /** Undefined while passkeys are off. */
  passkeys: ResolvedPasskeys | undefined
}

/** Every option, in the order "did you mean" prefers when a misspelt name is as near to two. */
export const OPTION_KEYS: ReadonlyArray<keyof PasswordAuthOptions> = [
  'accounts', 'sessions', 'attempts', 'jwt', 'refresh', 'prefix', 'realm', 'argon2', 'legacyHashes', 'upgradeHashes', 'passwordPolicy', 'throttle', 'rateLimit',
  'hashing', 'storeTimeout', 'onEvent', 'decorators', 'sessionRoutes', 'reauthMaxAge', 'deliver', 'passwordReset', 'mailLimit', 'oneTimeTokens',
  'registration', 'mfa', 'account', 'admin', 'breachedPasswords', 'passkeys'
]

/** Options of earlier versions: the old name points at its successor, whatever the spelling distance says. */
const RENAMED = { revocations: 'sessions' }

/** The groups' own options: one written at the top is pointed to its group (`trustDays`: did you mean mfa.trustDays?). */
const GROUP_MEMBERS = {
  jwt: JWT_OPTION_KEYS,
  throttle: THROTTLE_OPTION_KEYS,
  passwordReset: PASSWORD_RESET_KEYS,
  registration: REGISTRATION_KEYS,
  mfa: MFA_OPTION_KEYS,
  account: ACCOUNT_KEYS,
  passkeys: PASSKEYS_OPTION_KEYS
}

const isOn = (value: unknown): boolean => value !== undefined && value !== false
const part = (value: unknown, key: string): unknown => isObject(value) ? value[key] : undefined

/**
 * Options that only a feature uses, each with the option that turns the feature on: given while it is off,
 * the option would never be read (a store never called, a lifetime never applied), so it is a mistake.
 */
const NEEDS_FEATURE: ReadonlyArray<{ option: string, given: (o: PasswordAuthOptions) => boolean, on: (o: PasswordAuthOptions) => boolean, meant: string }> = [
  {
    option: 'mfa.trustedDevices',
    given: (o) => part(o.mfa, 'trustedDevices') !== undefined,
    on: (o) => (part(o.mfa, 'trustDays') as number) > 0,
    meant: 'mfa: { trustDays: 30, trustedDevices }'
  },
  {
    option: 'passwordReset.keepPasskeys',
    given: (o) => part(o.passwordReset, 'keepPasskeys') !== undefined,
    on: (o) => isOn(o.passkeys),
    meant: 'passkeys: { rpId, rpName, origins }'
  },
  { option: 'account.verifyTtl', given: (o) => part(o.account, 'verifyTtl') !== undefined, on: (o) => part(o.account, 'emailChange') === true, meant: 'account.emailChange: true' },
  { option: 'account.revertTtl', given: (o) => part(o.account, 'revertTtl') !== undefined, on: (o) => part(o.account, 'emailChange') === true, meant: 'account.emailChange: true' },
  { option: 'account.beforeDelete', given: (o) => part(o.account, 'beforeDelete') !== undefined, on: (o) => part(o.account, 'deletion') === true, meant: 'account.deletion: true' },
  { option: 'account.exportData', given: (o) => part(o.account, 'exportData') !== undefined, on: (o) => part(o.account, 'export') === true, meant: 'account.export: true' },
  {
    option: 'oneTimeTokens',
    given: (o) => o.oneTimeTokens !== undefined,
    on: (o) => isOn(o.passwordReset) || isOn(o.registration) || isOn(o.mfa) || isOn(o.passkeys) || part(o.account, 'emailChange') === true,
    meant: 'one of passwordReset, registration, mfa, passkeys or account.emailChange (they keep their links and challenges there)'
  },
  { option: 'mailLimit', given: (o) => o.mailLimit !== undefined, on: (o) => o.deliver !== undefined, meant: 'deliver' }
]

/** Checks every option and fills in the defaults, visiting each room's door once; a mistake throws FST_PWAUTH_INVALID_OPTION. */
export function resolveOptions (given: PasswordAuthOptions): ResolvedOptions {
  assert(isObject(given), 'the options are required, e.g. { accounts, jwt: { secret } }')
  for (const [before, now] of Object.entries(RENAMED)) assert(!Object.hasOwn(given, before), `unknown option ${before}: did you mean ${now}?`)
  const options = applyAliases(given)
  checkKnownKeys(options, OPTION_KEYS, '', GROUP_MEMBERS)
  checkStore('accounts', options.accounts)
  const { accounts, realm = PLUGIN_NAME, storeTimeout = 2000, onEvent } = options
  checkHeaderText(realm, 'realm')
  assert(isInteger(storeTimeout, 1, 60_000), 'storeTimeout must be a whole number of milliseconds from 1 to 60000')
  assert(onEvent === undefined || typeof onEvent === 'function', 'onEvent must be a function')
  const messages = resolveMessages(options)
  const routes = resolveRoutes(options, { canDeliver: messages.deliver !== undefined, canCreateAccounts: typeof accounts.create === 'function' })
  const password = resolvePassword(options, storeTimeout)
  const tokens = resolveTokens(options)
  const sessions = resolveSessions(options, tokens.accessToken.expiresIn)
  const throttle = resolveThrottle(options)
  const resolved: ResolvedOptions = {
    accounts,
    realm,
    storeTimeout,
    onEvent,
    messages,
    routes,
    password,
    tokens,
    sessions,
    throttle,
    decorators: resolveGuard(options),
    mfa: resolveMfa(options, realm),
    account: resolveAccount(options, {
      canDeliver: messages.deliver !== undefined,
      accounts,
      stores: { sessions: sessions.store, oneTimeTokens: tokens.oneTimeTokenStore, attempts: throttle.attempts }
    }),
    passkeys: resolvePasskeys(options)
  }
  for (const { option, given, on, meant } of NEEDS_FEATURE) {
    assert(!given(options) || on(options), `${option} is set, but nothing uses it while its feature is off: did you mean ${meant}?`)
  }
  checkProcessLocalAlone(options)
  checkOneTimeTokensShared(resolved)
  return resolved
}

const MEMORY = [MemorySessionStore, MemoryAttemptStore, MemoryOneTimeTokenStore, MemoryMfaStore, MemoryPasskeyStore, MemoryTrustedDeviceStore]

/**
 * Stores for one process (SQLite) never stand beside the state stores instances share: a host that put sessions,
 * counters, tokens, second factors, passkeys or trusted devices in a store outside this process (PostgreSQL, Redis,
 * its own) runs, or means to run, several instances, and each would then keep its own copy of the rest. Accounts and
 * activity may live anywhere (they are the host's data).
 */
function checkProcessLocalAlone (options: PasswordAuthOptions): void {
  const stores = { sessions: options.sessions, attempts: options.attempts, oneTimeTokens: options.oneTimeTokens, 'mfa.store': part(options.mfa, 'store'), 'passkeys.store': part(options.passkeys, 'store'), 'mfa.trustedDevices': part(options.mfa, 'trustedDevices') }
  const given = Object.entries(stores).filter(([, store]) => store !== undefined)
  const local = given.filter(([, store]) => isProcessLocal(store)).map(([name]) => name)
  const shared = given.filter(([, store]) => !isProcessLocal(store) && !MEMORY.some((kind) => store instanceof kind)).map(([name]) => name)
  if (local.length === 0 || shared.length === 0) return
  throw invalidOption(`${local.join(', ')} ${local.length === 1 ? 'is' : 'are'} in SQLite, which serves one process, but ${shared.join(', ')} ` +
    `${shared.length === 1 ? 'is' : 'are'} in a store instances share: every instance would keep its own ${local.join(', ')}. ` +
    'Put all of them in SQLite (one server process), or all in shared stores (PostgreSQL, Redis) for several instances')
}

/**
 * Where sessions or attempt counters are shared between instances, one-time tokens must be too (contract §13): in
 * one process's memory, a LoginMfa, a passkey ceremony or a link whose steps reach two instances would fail.
 */
function checkOneTimeTokensShared ({ sessions, throttle, tokens, routes, mfa, passkeys, account }: ResolvedOptions): void {
  if (!(tokens.oneTimeTokenStore instanceof MemoryOneTimeTokenStore)) return
  const inProcess = (store: unknown): boolean => store instanceof MemorySessionStore || store instanceof MemoryAttemptStore || isProcessLocal(store)
  const shared = [
    ...inProcess(sessions.store) ? [] : ['sessions'],
    ...inProcess(throttle.attempts) ? [] : ['attempts']
  ]
  const issuing = [
    ...routes.passwordReset === undefined ? [] : ['passwordReset'],
    ...routes.registration === undefined ? [] : ['registration'],
    ...mfa === undefined ? [] : ['mfa'],
    ...passkeys === undefined ? [] : ['passkeys'],
    ...account.emailChange === undefined ? [] : ['account.emailChange']
  ]
  if (shared.length === 0 || issuing.length === 0) return
  const stores = shared.join(' and ')
  throw invalidOption(`${stores} are shared (not in this process's memory), but one-time tokens (links, LoginMfa's mfaToken, passkey ` +
    'challenges) would stay in it: a step that reaches another instance would fail. Add the option oneTimeTokens: new ' +
    `PostgresOneTimeTokenStore({ pool }) or new RedisOneTimeTokenStore({ client }), beside your ${stores} (or turn off ${issuing.join(', ')})`)
}
