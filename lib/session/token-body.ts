import type { FastifyReply } from 'fastify'
import type { SecureCookie } from '../http/secure-cookie.js'
import type { TokenReply } from './service.js'

/** The body of a Login or Refresh answer; in cookie mode the refresh token goes into the cookie instead. */
export function tokenBody (reply: FastifyReply, tokenReply: TokenReply, refreshCookie: SecureCookie | undefined): TokenReply {
  if (refreshCookie === undefined || tokenReply.refreshToken === undefined) return tokenReply
  const { refreshToken, ...body } = tokenReply
  refreshCookie.set(reply, refreshToken, tokenReply.refreshExpiresIn ?? 0)
  return body
}
