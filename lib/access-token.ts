import type { FastifyRequest } from 'fastify'
import { requestError } from './errors.js'
import type { StoreCall } from './store-call.js'
import type { AccountStore, PasswordAuthAccount, RevocationStore, StoredAccount } from './stores/types.js'
import type { AccessTokenClaims, TokenService } from './tokens.js'

export interface CheckedToken {
  account: PasswordAuthAccount
  claims: AccessTokenClaims
}

export type CheckAccessToken = (request: FastifyRequest) => Promise<CheckedToken>

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

export function withoutHash ({ passwordHash: _, ...account }: StoredAccount): PasswordAuthAccount {
  return account
}

/**
 * Accepts a token only if it verifies, is not revoked, and its account exists, is active and still has
 * the token's credential version. The two store reads run at once; either failing is a 503.
 */
export function createTokenCheck (tokens: TokenService, accounts: AccountStore, revocations: RevocationStore, storeCall: StoreCall): CheckAccessToken {
  return async function checkAccessToken (request) {
    const claims = tokens.verify(bearerToken(request.headers.authorization))
    const [revoked, account] = await Promise.all([
      storeCall(request, 'revocations.isRevoked', async () => await revocations.isRevoked(claims.jti)),
      storeCall(request, 'accounts.findById', async () => await accounts.findById(claims.sub))
    ])
    if (revoked || account === null || !account.active || account.credentialVersion !== claims.cv) {
      throw requestError('FST_PWAUTH_TOKEN_INVALID')
    }
    return { account: withoutHash(account), claims }
  }
}
