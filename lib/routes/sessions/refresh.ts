import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { tokenBody } from '../../session/token-body.js'
import { BODY_ERRORS, jsonResponse, problemResponses, setCookieHeader } from '../../http/openapi.js'
import { documentedTokenReply, RefreshBody, RefreshCookieBody } from '../../http/schemas.js'
import type { RouteContext } from '../context.js'

export function registerRefresh (app: FastifyInstance, { sessionService, refreshCookie }: RouteContext): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post('/Refresh', {
    schema: {
      summary: 'Exchange a refresh token for new tokens',
      description: 'Answers like Login, with a new access token of the same session and the next refresh token. A refresh token sent again within the grace period gets the same next refresh token; sent later, it ends the session.' +
        (refreshCookie === undefined ? '' : ' Cookie mode: the refresh token comes from, and goes back into, its HttpOnly cookie; the body may be {}.'),
      tags: ['Auth'],
      body: refreshCookie === undefined ? RefreshBody : RefreshCookieBody,
      response: {
        200: jsonResponse('A new access token of the same session, and the next refresh token.', documentedTokenReply({ refresh: true, cookie: refreshCookie !== undefined }),
          refreshCookie === undefined ? {} : setCookieHeader(refreshCookie, 'set')),
        // In cookie mode a refresh that fails clears the cookie: the token is dead whatever the reason.
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_REFRESH_TOKEN_INVALID', 'FST_PWAUTH_UNAVAILABLE'],
          refreshCookie === undefined ? {} : { 401: setCookieHeader(refreshCookie, 'cleared'), 503: setCookieHeader(refreshCookie, 'cleared') })
      }
    }
  }, async (request, reply) => {
    if (refreshCookie === undefined) return await sessionService.refresh(request, (request.body as Static<typeof RefreshBody>).refreshToken)
    const sent = refreshCookie.read(request)
    try {
      return tokenBody(reply, await sessionService.refresh(request, sent.kind === 'one' ? sent.token : ''), refreshCookie)
    } catch (err) {
      // The token is dead whatever the reason: the browser may forget it. Not when several cookies came (one
      // planted) or another site sent the request: clearing could delete the real cookie of a client that
      // did not send this request.
      if (sent.kind === 'one' || sent.kind === 'none') refreshCookie.clear(reply)
      throw err
    }
  })
}
