import type { FastifyInstance } from 'fastify'
import type { ResolvedKey } from '../tokens/keys.js'

/**
 * The public keys of the EdDSA / ES256 keys as a JWKS document (RFC 7517), for services that verify
 * access tokens themselves. Such a service sees signatures only: not logouts, ended sessions or
 * deactivated accounts.
 */
export function registerJwks (fastify: FastifyInstance, path: string, keys: ResolvedKey[]): void {
  const document = JSON.stringify({ keys: keys.flatMap((key) => key.publicJwk === undefined ? [] : [key.publicJwk]) })
  fastify.get(path, {
    schema: { summary: 'The public keys that verify access tokens (JWKS)', tags: ['Auth'] }
  }, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300')
    reply.type('application/jwk-set+json')
    return document
  })
}
