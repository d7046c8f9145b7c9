import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { bearerToken } from '../../guard/token-check.js'
import { requestError } from '../../common/errors.js'
import { noContentResponse, problemResponses, setCookieHeader } from '../../http/openapi.js'
import type { SecureCookie } from '../../http/secure-cookie.js'
import type { RouteContext } from '../context.js'
import type { AccessTokenClaims } from '../../tokens/access-tokens.js'

export function registerLogout (app: FastifyInstance, context: RouteContext): void {
  const { accessTokens, sessionService, emit, refreshCookie } = context

  app.post('/Logout', {
    schema: {
      summary: 'Log out: end the session of the presented access token',
      description: 'Needs the header `Authorization: Bearer <access token>`. The token, every other access token of its session and the ' +
        'session\'s refresh token stop working at once, on every instance sharing the session store. The body is ignored.' +
        (refreshCookie === undefined ? '' : ' Cookie mode: without a usable access token, the refresh cookie\'s session ends instead; every answer clears the cookie.'),
      tags: ['Auth'],
      response: {
        204: noContentResponse('Logged out.', refreshCookie === undefined ? {} : setCookieHeader(refreshCookie, 'cleared')),
        ...problemResponses(['FST_PWAUTH_TOKEN_MISSING', 'FST_PWAUTH_TOKEN_INVALID', 'FST_PWAUTH_BODY_TOO_LARGE', 'FST_PWAUTH_UNAVAILABLE'],
          refreshCookie === undefined ? {} : { 401: setCookieHeader(refreshCookie, 'cleared') })
      }
    }
  }, (request, reply) => {
    // Not an async handler: its promise, Fastify's then() on it and the await of the reply (a thenable) were
    // three more turns of the microtask queue on one of the cheapest requests. With memory stores the session
    // ends in this turn and the answer goes at once; otherwise once it ended.
    let ending: Promise<void> | undefined
    try {
      ending = refreshCookie === undefined ? endBearerSession(request) : endCookieSession(request, reply, refreshCookie)
    } catch (err) {
      reply.send(err)
      return
    }
    if (ending === undefined) loggedOut(reply)
    else ending.then(() => { loggedOut(reply) }, (err: unknown) => { reply.send(err) })
  })

  /** Cookie mode: the bearer token's session, or without a usable one the refresh cookie's; every answer clears the cookie. */
  async function endCookieSession (request: FastifyRequest, reply: FastifyReply, cookie: SecureCookie): Promise<void> {
    const sent = cookie.read(request)
    try {
      try {
        await endBearerSession(request)
      } catch (err) {
        // A browser whose access token expired can still log out: by its refresh cookie.
        if (!isTokenError(err) || sent.kind !== 'one') throw err
        const ended = await sessionService.endByRefreshToken(request, sent.token)
        if (ended === null) throw err
        emit(request, { type: 'logout', ...ended })
      }
    } catch (err) {
      // Every 401 clears the cookie, except when several arrived: clearing might delete the real one.
      if (isTokenError(err) && sent.kind !== 'several') cookie.clear(reply)
      throw err
    }
    cookie.clear(reply)
  }

  /**
   * Ends the session of the bearer token; throws (at once) or rejects with TOKEN_MISSING or TOKEN_INVALID if it
   * cannot. Not async, as the handler: with stores that answer in the same turn it returns nothing, having ended it.
   */
  function endBearerSession (request: FastifyRequest): Promise<void> | undefined {
    const claims = accessTokens.verify(bearerToken(request.headers.authorization), { remember: false })
    // Ending first is safe (the token's signature is verified) and saves a round trip; of concurrent
    // logouts of one session only the one that ended it gets 204.
    const ended = sessionService.endForLogout(request, claims)
    if (typeof ended === 'boolean') {
      loggedOutOf(request, claims, ended)
      return undefined
    }
    return ended.then((ended) => { loggedOutOf(request, claims, ended) })
  }

  function loggedOutOf (request: FastifyRequest, claims: AccessTokenClaims, ended: boolean): void {
    if (!ended) throw requestError('FST_PWAUTH_TOKEN_INVALID')
    emit(request, { type: 'logout', accountId: claims.sub, sessionId: claims.sid, tokenId: claims.jti })
  }
}

function loggedOut (reply: FastifyReply): void {
  // No payload: null would be serialised by the 204 schema and then dropped (204 has no body).
  try {
    reply.code(204).send()
  } catch (err) {
    reply.send(err)
  }
}

function isTokenError (err: unknown): boolean {
  const code = (err as { code?: unknown }).code
  return code === 'FST_PWAUTH_TOKEN_MISSING' || code === 'FST_PWAUTH_TOKEN_INVALID'
}
