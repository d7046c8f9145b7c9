import type { FastifyInstance } from 'fastify'

const unauthorized = { message: 'invalid token' }

/**
 * POST /hand/logout, the hand-written Logout: `await request.jwtVerify()` of the @fastify/jwt registered in
 * `app`'s context, then the jti into an in-memory Set of revoked ones. The bench server has it beside the
 * plugin, and the example server gets the same code through example-preload.ts: one route measured in both
 * processes tells what the example's set-up costs every request, apart from what the plugin costs.
 */
export function registerHandLogout (app: FastifyInstance, revoked: Set<string> = new Set()): void {
  app.post('/hand/logout', async (request, reply) => {
    await request.jwtVerify()
    const { jti } = request.user as { jti: string }
    if (revoked.has(jti)) return await reply.code(401).send(unauthorized)
    revoked.add(jti)
    return await reply.code(204).send()
  })
}
