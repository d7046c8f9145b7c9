import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { requestError } from '../../common/errors.js'
import { accountOf, authenticate, requireRecentAuthentication } from '../../guard/authenticate.js'
import { authenticateResponses, jsonResponse, noContentResponse, problemResponses, recentAuthenticationResponses } from '../../http/openapi.js'
import type { TrustedDevices } from '../../mfa/trusted-devices.js'
import type { RouteContext } from '../context.js'

export const TrustedDevice = Type.Object({
  id: Type.String(),
  label: Type.String({ description: 'The browser and system at the LoginMfa that trusted it, e.g. "Chrome on macOS".' }),
  trustedUntil: Type.String({ format: 'date-time', description: 'When the trust ends by itself.' }),
  lastUsedAt: Type.String({ format: 'date-time', description: 'Its last Login without a code (when it was trusted, until then).' })
})

const iso = (ms: number): string => new Date(ms).toISOString()

/**
 * The devices trusted for the caller's second factor (contract §21): list them, end one. An id that is not one
 * of the caller's answers like the session routes' unknown ids (404 SESSION_NOT_FOUND); ending one needs a
 * recent authentication, as ending a session does.
 */
export function registerTrustedDeviceRoutes (app: FastifyInstance, { reauthMaxAge }: RouteContext, trustedDevices: TrustedDevices): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()

  routes.get('/Sessions/Devices', {
    onRequest: authenticate,
    schema: {
      summary: 'Your devices trusted for the second factor',
      description: 'Devices a LoginMfa with rememberDevice trusted: a Login from one with the right password needs no code.',
      tags: ['Sessions'],
      security: [{ bearerAuth: [] }],
      response: { 200: jsonResponse('Your trusted devices, oldest first.', Type.Array(TrustedDevice)), ...authenticateResponses() }
    }
  }, async (request) => {
    const trusts = await trustedDevices.list(request, accountOf(request)!.id)
    return trusts.map(({ id, label, trustedUntil, lastUsedAt }) => ({ id, label, trustedUntil: iso(trustedUntil), lastUsedAt: iso(lastUsedAt) }))
  })

  routes.delete('/Sessions/Devices/:id', {
    onRequest: [authenticate, requireRecentAuthentication(reauthMaxAge)],
    schema: {
      summary: 'Stop trusting one of your devices',
      description: `Its next Login needs a code again. Needs a password proof within the last ${reauthMaxAge} s (Reauthenticate).`,
      tags: ['Sessions'],
      security: [{ bearerAuth: [] }],
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: {
        204: noContentResponse('No longer trusted.'),
        ...problemResponses(['FST_PWAUTH_SESSION_NOT_FOUND']),
        ...recentAuthenticationResponses()
      }
    }
  }, async (request, reply) => {
    if (!await trustedDevices.remove(request, accountOf(request)!.id, request.params.id)) throw requestError('FST_PWAUTH_SESSION_NOT_FOUND')
    return await reply.code(204).send()
  })
}
