import type { FastifyReply } from 'fastify'
import type { SecureCookie } from '../http/secure-cookie.js'
import type { TokenReply } from './service.js'

/** The body of a Login or Refresh answer; in cookie mode the refresh token goes into the cookie instead. */
export function tokenBody (reply: FastifyReply, tokens: TokenReply, cookie: SecureCookie | undefined): TokenReply {
  if (cookie === undefined || tokens.refreshToken === undefined) return tokens
  const { refreshToken, ...body } = tokens
  cookie.set(reply, refreshToken, tokens.refreshExpiresIn ?? 0)
  return body
}
