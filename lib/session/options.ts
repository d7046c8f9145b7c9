import { assert, group, isInteger, isObject } from '../common/option-rules.js'
import type { SessionPolicy } from '../stores/types.js'

export interface RefreshOptions {
  /** Seconds a session may go without a refresh before it ends (default 604800, 7 days). */
  idleTimeout?: number
  /** Seconds after Login at which a session ends, whatever happens (default 2592000, 30 days). */
  maxLifetime?: number
  /** Seconds during which a replaced refresh token still gets the grace answer (default 10). */
  grace?: number
  /** Puts the refresh token in an HttpOnly cookie instead of the body. Default false. */
  cookie?: boolean | { name?: string }
}

export interface ResolvedRefresh {
  enabled: boolean
  policy: SessionPolicy
  /** The refresh token's cookie name in cookie mode. */
  cookie: string | undefined
}

const COOKIE_NAME = /^[!#$%&'*+.^\w`|~-]{1,64}$/

export function resolveRefresh (refresh: RefreshOptions | false | undefined, accessTokenSeconds: number): ResolvedRefresh {
  if (refresh === false) {
    // A session is its one access token: it ends when the token expires.
    const lifetime = accessTokenSeconds * 1000
    return { enabled: false, policy: { idleMs: lifetime, maxMs: lifetime, graceMs: 0 }, cookie: undefined }
  }
  const { idleTimeout = 604_800, maxLifetime = 2_592_000, grace = 10, cookie = false } = group(refresh, ['idleTimeout', 'maxLifetime', 'grace', 'cookie'], 'refresh')
  // Any whole number of seconds (tests of expiry want a few); only an idle limit past the absolute one cannot work.
  assert(isInteger(maxLifetime, 1, 400 * 86_400), 'refresh.maxLifetime must be a whole number of seconds from 1 to 34560000 (400 days)')
  assert(isInteger(idleTimeout, 1, maxLifetime), `refresh.idleTimeout must be a whole number of seconds from 1 to refresh.maxLifetime (${maxLifetime})`)
  assert(isInteger(grace, 0, 300), 'refresh.grace must be a whole number of seconds from 0 to 300')
  assert(typeof cookie === 'boolean' || isObject(cookie), 'refresh.cookie must be true, false or { name }')
  let cookieName: string | undefined
  if (cookie !== false) {
    const { name = '__Secure-fastify-password-auth-refresh' } = cookie === true ? {} : group(cookie, ['name'], 'refresh.cookie')
    assert(typeof name === 'string' && COOKIE_NAME.test(name), 'refresh.cookie.name must be a cookie name: 1 to 64 letters, digits and !#$%&\'*+.^_`|~-')
    cookieName = name
  }
  return { enabled: true, policy: { idleMs: idleTimeout * 1000, maxMs: maxLifetime * 1000, graceMs: grace * 1000 }, cookie: cookieName }
}

/** Seconds a password proof counts as recent for the plugin's own sensitive routes (default 300). */
export function resolveReauthMaxAge (reauthMaxAge: unknown = 300): number {
  assert(isInteger(reauthMaxAge, 1, 86_400), 'reauthMaxAge must be a whole number of seconds from 1 to 86400')
  return reauthMaxAge
}
