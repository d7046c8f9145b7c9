import type { FastifyRequest } from 'fastify'
import { requestError } from '../common/errors.js'
import { sessionGetAtOnce } from '../stores/at-once.js'
import { callAtOnce, type StoreCall } from '../stores/store-call.js'
import { accountAccepts } from '../session/account-rule.js'
import type { AccountReads } from '../stores/account-reads.js'
import type { PasswordAuthAccount, SessionState, SessionStore } from '../stores/types.js'
import type { AccessTokenClaims, AccessTokens } from '../tokens/access-tokens.js'

/** `request.session` behind the guard: the token's session, and when its account last proved its password. */
export interface PasswordAuthSession {
  id: string
  /** Epoch milliseconds of the last password proof: Login, or Reauthenticate. */
  authenticatedAt: number
  /** Whether the account proved a second factor in this session (as the store says now, not as the token said). */
  mfa: boolean
}

export interface CheckedToken {
  account: PasswordAuthAccount
  claims: AccessTokenClaims
  session: PasswordAuthSession
}

/** The check: at once when both stores answer in the same turn (memory), else a promise; a refusal throws or rejects. */
export type CheckAccessToken = (request: FastifyRequest) => CheckedToken | Promise<CheckedToken>

/**
 * The token in `Authorization: Bearer <token>`. No header or another scheme: 401 TOKEN_MISSING;
 * the Bearer scheme without a usable token: 401 TOKEN_INVALID.
 */
export function bearerToken (authorization: string | undefined): string {
  if (authorization === undefined) throw requestError('FST_PWAUTH_TOKEN_MISSING')
  const space = authorization.indexOf(' ')
  const scheme = space === -1 ? authorization : authorization.slice(0, space)
  if (scheme.toLowerCase() !== 'bearer') throw requestError('FST_PWAUTH_TOKEN_MISSING')
  const token = space === -1 ? '' : authorization.slice(space + 1).trim()
  if (token === '' || token.includes(' ')) throw requestError('FST_PWAUTH_TOKEN_INVALID')
  return token
}

/** The account as handlers see it: never with a password hash, even if a custom store returned one. */
export function publicAccount (account: PasswordAuthAccount): PasswordAuthAccount {
  if (!('passwordHash' in account)) return account
  const { passwordHash: _, ...rest } = account as PasswordAuthAccount & { passwordHash: unknown }
  return rest
}

/**
 * Accepts a token only if it verifies, its session is live, and its account exists, is active and still
 * has the token's credential version. The two store reads run at once; either failing is a 503. With stores that
 * answer in the same turn (at-once.ts) the check is synchronous: no promise on the path of every request.
 */
export function createTokenCheck (accessTokens: AccessTokens, accounts: AccountReads, sessions: SessionStore, storeCall: StoreCall): CheckAccessToken {
  return function checkAccessToken (request) {
    const claims = accessTokens.verify(bearerToken(request.headers.authorization))
    const getSession = sessionGetAtOnce(sessions)
    const account = getSession === undefined ? undefined : accounts.byIdAtOnce(request, claims.sub)
    if (account !== undefined) {
      return checked(claims, callAtOnce(request.log, 'sessions.get', () => getSession!(claims.sid)), account)
    }
    return Promise.all([
      storeCall(request.log, 'sessions.get', () => sessions.get(claims.sid)),
      accounts.byId(request, claims.sub)
    ]).then(([session, account]) => checked(claims, session, account))
  }
}

function checked (claims: AccessTokenClaims, session: SessionState | null, account: PasswordAuthAccount | null): CheckedToken {
  if (session === null || session.accountId !== claims.sub || !accountAccepts(account, claims.cv)) {
    throw requestError('FST_PWAUTH_TOKEN_INVALID')
  }
  return { account: publicAccount(account), claims, session: { id: claims.sid, authenticatedAt: session.authenticatedAt, mfa: session.mfa === true } }
}
