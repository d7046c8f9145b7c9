import type { FastifyInstance } from 'fastify'

export const BODY_LIMIT = 16 * 1024

/** Only `application/json` (any charset); other media types get 415. Prototype poisoning is an error. */
export function acceptJsonOnly (app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, app.getDefaultJsonParser('error', 'error'))
}

/**
 * Reads (up to the body limit) and discards any body, whatever its media type. The header goes first,
 * because Fastify answers a malformed Content-Type with 415 before any parser runs.
 */
export function ignoreBody (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => { delete request.headers['content-type'] })
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, _body, done) => { done(null, undefined) })
}
