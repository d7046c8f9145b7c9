import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { requestError } from '../../common/errors.js'
import { accountOf, authenticate, requireRecentAuthentication, sessionOf } from '../../guard/authenticate.js'
import { authenticateResponses, jsonResponse, noContentResponse, problemResponses, recentAuthenticationResponses } from '../../http/openapi.js'
import { describeDevice } from '../../http/user-agent.js'
import type { SessionInfo } from '../../stores/types.js'
import type { RouteContext } from '../context.js'

export const Session = Type.Object({
  id: Type.String(),
  current: Type.Boolean({ description: 'True for the session of the token that asks.' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.String({ format: 'date-time', description: 'The last Login or refresh.' }),
  expiresAt: Type.String({ format: 'date-time', description: 'When it ends unless refreshed.' }),
  ip: Type.String({ description: 'The client\'s address at Login, as Fastify\'s trustProxy setting gives it: never a header the server does not trust.' }),
  userAgent: Type.String(),
  device: Type.Object({
    browser: Type.String({ description: 'e.g. "Chrome", "Safari"; "Unknown" when the User-Agent names none.' }),
    os: Type.String({ description: 'e.g. "macOS", "Android"; "Unknown" when the User-Agent names none.' }),
    type: Type.String({ description: '"desktop", "mobile", "tablet", "tv", "bot" or "unknown".' })
  }, { description: 'What the User-Agent at Login says, parsed by bowser.' }),
  trustedDevice: Type.Boolean({ description: 'True when a device trusted for the second factor stood for the code at Login.' })
})

export const EndOthersReply = Type.Object({ ended: Type.Integer() })

const iso = (ms: number): string => new Date(ms).toISOString()

/** A session as its owner sees it (GET /Sessions, and Export). */
export function sessionView (session: SessionInfo, currentId: string): Static<typeof Session> {
  return {
    id: session.id,
    current: session.id === currentId,
    createdAt: iso(session.createdAt),
    lastUsedAt: iso(session.lastUsedAt),
    expiresAt: iso(session.expiresAt),
    ip: session.ip,
    userAgent: session.userAgent,
    device: describeDevice(session.userAgent),
    trustedDevice: session.trustedDevice === true
  }
}

/**
 * The user's own sessions: list them, end one, end all but this one. Session ids come only from the
 * caller's token and the path, and a session of another account answers exactly like an unknown one.
 * Ending needs a recent password proof (reauthMaxAge), so a stolen access token alone cannot lock the
 * owner out of their other devices.
 */
export function registerSessionRoutes (app: FastifyInstance, { sessionService, reauthMaxAge, trustedDevices }: RouteContext): void {
  const recent = [authenticate, requireRecentAuthentication(reauthMaxAge)]
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()

  routes.get('/Sessions', {
    onRequest: authenticate,
    schema: {
      summary: 'Your live sessions',
      tags: ['Sessions'],
      security: [{ bearerAuth: [] }],
      response: { 200: jsonResponse('Your live sessions, oldest first.', Type.Array(Session)), ...authenticateResponses() }
    }
  }, async (request) => {
    const current = sessionOf(request)!.id
    const sessions = await sessionService.list(request, accountOf(request)!.id)
    return sessions.map((session) => sessionView(session, current))
  })

  routes.delete('/Sessions/:id', {
    onRequest: recent,
    schema: {
      summary: 'End one of your sessions',
      description: `Needs a password proof within the last ${reauthMaxAge} s (Reauthenticate).`,
      tags: ['Sessions'],
      security: [{ bearerAuth: [] }],
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: {
        204: noContentResponse('Ended: its tokens stop working at the next request.'),
        ...problemResponses(['FST_PWAUTH_SESSION_NOT_FOUND']),
        ...recentAuthenticationResponses()
      }
    }
  }, async (request, reply) => {
    const accountId = accountOf(request)!.id
    const { id } = request.params
    // Owner first: a session of another account must answer exactly like an unknown one.
    if (await sessionService.ownerOf(request, id) !== accountId || await sessionService.end(request, id, 'ended_by_user') !== accountId) {
      throw requestError('FST_PWAUTH_SESSION_NOT_FOUND')
    }
    return await reply.code(204).send()
  })

  routes.post('/Sessions/EndOthers', {
    onRequest: recent,
    schema: {
      summary: 'End every session but this one',
      description: `Needs a password proof within the last ${reauthMaxAge} s (Reauthenticate). The body is ignored.` +
        (trustedDevices === undefined ? '' : ' Every device trusted for the second factor needs a code again.'),
      tags: ['Sessions'],
      security: [{ bearerAuth: [] }],
      response: {
        200: jsonResponse('How many sessions ended.', EndOthersReply),
        ...recentAuthenticationResponses()
      }
    }
  }, async (request) => {
    const accountId = accountOf(request)!.id
    // Trusts first: a Login from a trusted device that races this ends the session it started (routes/login.ts).
    // Fails closed: no session is ended while a trust that should end with them might live on.
    if (trustedDevices !== undefined && !await trustedDevices.endAll(request, accountId, 'sessions_ended')) throw requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 })
    return { ended: await sessionService.endOthers(request, accountId, sessionOf(request)!.id, 'ended_by_user') }
  })
}
