import type { FastifyInstance } from 'fastify'
import { NoContent, PROBLEM_RESPONSES } from '../schemas.js'
import type { RouteContext } from './context.js'

// A revocation outlives its token by a second, so no clock rounding lets a revoked token through.
const REVOCATION_MARGIN_MS = 1000

export function registerLogout (app: FastifyInstance, context: RouteContext): void {
  const { revocations, checkAccessToken, storeCall, emit } = context

  app.post('/Logout', {
    schema: {
      summary: 'Log out: revoke the presented access token',
      description: 'The token stops working at once, on every instance sharing the revocation store. The body is ignored.',
      tags: ['Auth'],
      security: [{ bearerAuth: [] }],
      response: { 204: NoContent, ...PROBLEM_RESPONSES }
    }
  }, async (request, reply) => {
    const { account, claims } = await checkAccessToken(request)
    await storeCall(request, 'revocations.revoke', async () => {
      await revocations.revoke(claims.jti, claims.exp * 1000 + REVOCATION_MARGIN_MS)
    })
    emit(request, { type: 'logout', accountId: account.id, tokenId: claims.jti })
    return await reply.code(204).send(null)
  })
}
