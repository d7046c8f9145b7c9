import type { FastifyBaseLogger } from 'fastify'
import type { EmitEvent } from '../common/events.js'
import { assert, group, isInteger, isObject } from '../common/option-rules.js'
import { createSecureCookie, type SecureCookie } from '../http/secure-cookie.js'
import { checkStore } from '../stores/check-store.js'
import { MemorySessionStore } from '../stores/memory/sessions.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AccountReads } from '../stores/account-reads.js'
import type { SessionPolicy, SessionStore } from '../stores/types.js'
import type { AccessTokens } from '../tokens/access-tokens.js'
import type { KeyRing } from '../tokens/key-ring.js'
import { RefreshTokens } from './refresh-tokens.js'
import { SessionService } from './service.js'

/** The plugin options session/ reads. */
export interface SessionPluginOptions {
  /** Sessions; default in memory (share one store between instances). */
  sessions?: SessionStore
  /** Refresh tokens (on by default); `false` turns them off, and a session is then one access token. */
  refresh?: RefreshOptions | false
  /** Seconds a password proof counts as recent for ending sessions (default 300). */
  reauthMaxAge?: number
}

export interface RefreshOptions {
  /** Seconds a session may go without a refresh before it ends (default 604800, 7 days). */
  idleTimeout?: number
  /** Seconds after Login at which a session ends, whatever happens (default 2592000, 30 days). */
  maxLifetime?: number
  /** Seconds during which a replaced refresh token still gets the grace answer (default 10). */
  grace?: number
  /**
   * Puts the refresh token in an HttpOnly cookie instead of the body. Default false. `origins`: the exact
   * origins (e.g. 'https://app.example.com') of pages on other hosts that may use the cookie; a request whose
   * `Origin` names another host than its own and none of these is answered as if it had no cookie (contract §12).
   */
  cookie?: boolean | { name?: string, origins?: string[] }
}

export interface ResolvedRefresh {
  enabled: boolean
  policy: SessionPolicy
  /** The refresh token's cookie name in cookie mode. */
  cookie: string | undefined
  /** The other origins the cookies may be used from (cookie mode). */
  cookieOrigins: readonly string[]
}

const COOKIE_NAME = /^[!#$%&'*+.^\w`|~-]{1,64}$/

export interface ResolvedSessions {
  store: SessionStore
  refresh: ResolvedRefresh
  /** Seconds a password proof counts as recent for the plugin's own sensitive routes. */
  reauthMaxAge: number
}

/** `accessTokenSeconds`: without refresh tokens, a session lives as long as its one access token. */
export function resolveSessions ({ sessions, refresh, reauthMaxAge }: SessionPluginOptions, accessTokenSeconds: number): ResolvedSessions {
  if (sessions !== undefined) checkStore('sessions', sessions)
  return { store: sessions ?? new MemorySessionStore(), refresh: resolveRefresh(refresh, accessTokenSeconds), reauthMaxAge: resolveReauthMaxAge(reauthMaxAge) }
}

function resolveRefresh (refresh: RefreshOptions | false | undefined, accessTokenSeconds: number): ResolvedRefresh {
  if (refresh === false) {
    // A session is its one access token: it ends when the token expires.
    const lifetime = accessTokenSeconds * 1000
    return { enabled: false, policy: { idleMs: lifetime, maxMs: lifetime, graceMs: 0 }, cookie: undefined, cookieOrigins: [] }
  }
  const { idleTimeout = 604_800, maxLifetime = 2_592_000, grace = 10, cookie = false } = group(refresh, ['idleTimeout', 'maxLifetime', 'grace', 'cookie'], 'refresh')
  // Any whole number of seconds (tests of expiry want a few); only an idle limit past the absolute one cannot work.
  assert(isInteger(maxLifetime, 1, 400 * 86_400), 'refresh.maxLifetime must be a whole number of seconds from 1 to 34560000 (400 days)')
  assert(isInteger(idleTimeout, 1, maxLifetime), `refresh.idleTimeout must be a whole number of seconds from 1 to refresh.maxLifetime (${maxLifetime})`)
  assert(isInteger(grace, 0, 300), 'refresh.grace must be a whole number of seconds from 0 to 300')
  assert(typeof cookie === 'boolean' || isObject(cookie), 'refresh.cookie must be true, false or { name }')
  let cookieName: string | undefined
  let cookieOrigins: string[] = []
  if (cookie !== false) {
    const { name = '__Secure-fastify-password-auth-refresh', origins = [] } = cookie === true ? {} : group(cookie, ['name', 'origins'], 'refresh.cookie')
    assert(typeof name === 'string' && COOKIE_NAME.test(name), 'refresh.cookie.name must be a cookie name: 1 to 64 letters, digits and !#$%&\'*+.^_`|~-')
    assert(Array.isArray(origins) && origins.every(isOrigin), 'refresh.cookie.origins must be an array of origins such as "https://app.example.com" (scheme, host and port only)')
    cookieName = name
    cookieOrigins = origins
  }
  return { enabled: true, policy: { idleMs: idleTimeout * 1000, maxMs: maxLifetime * 1000, graceMs: grace * 1000 }, cookie: cookieName, cookieOrigins }
}

/** Seconds a password proof counts as recent for the plugin's own sensitive routes (default 300). */
function resolveReauthMaxAge (reauthMaxAge: unknown = 300): number {
  assert(isInteger(reauthMaxAge, 1, 86_400), 'reauthMaxAge must be a whole number of seconds from 1 to 86400')
  return reauthMaxAge
}

/** Cookie mode: the refresh token's cookie and, beside it, the device token's (throttle/known-devices.ts). */
export interface SessionCookies {
  refresh: SecureCookie
  device: SecureCookie
}

interface Parts {
  accounts: AccountReads
  accessTokens: AccessTokens
  keyRing: KeyRing
  storeCall: StoreCall
  emit: EmitEvent
  log: FastifyBaseLogger
  /** The routes' full prefix, the host's included: the cookies' path. */
  fullPrefix: string
}

/** The session service, and in cookie mode its cookies. */
export function createSessions ({ store, refresh }: ResolvedSessions, { accounts, accessTokens, keyRing, storeCall, emit, log, fullPrefix }: Parts):
{ sessionService: SessionService, cookies: SessionCookies | undefined } {
  const sessionService = new SessionService({
    store, accounts, accessTokens, refreshTokens: new RefreshTokens(keyRing), storeCall, emit, policy: refresh.policy, refresh: refresh.enabled, log
  })
  const cookies = refresh.cookie === undefined
    ? undefined
    : {
        refresh: createSecureCookie(refresh.cookie, fullPrefix, refresh.cookieOrigins),
        device: createSecureCookie(deviceCookieName(refresh.cookie), fullPrefix, refresh.cookieOrigins)
      }
  return { sessionService, cookies }
}

/** An origin as browsers send it: scheme, host and port, nothing else. */
function isOrigin (value: unknown): value is string {
  if (typeof value !== 'string') return false
  try {
    return new URL(value).origin === value
  } catch {
    return false
  }
}

/** The device cookie's name beside the refresh cookie's: `…-refresh` becomes `…-device`, any other name gets `-device`. */
function deviceCookieName (refreshCookieName: string): string {
  return refreshCookieName.replace(/-refresh$/, '') + '-device'
}
