import type { FastifyInstance } from 'fastify'

export const BODY_LIMIT = 16 * 1024

/** Only `application/json` (any charset); other media types get 415. Prototype poisoning is an error. */
export function acceptJsonOnly (app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, app.getDefaultJsonParser('error', 'error'))
}

/** Reads (up to the body limit) and discards any body, whatever its media type. */
export function ignoreBody (app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, _body, done) => { done(null, undefined) })
}
