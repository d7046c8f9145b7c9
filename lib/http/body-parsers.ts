import type { FastifyInstance, FastifyRequest } from 'fastify'
import { requestError } from '../common/errors.js'

export const BODY_LIMIT = 16 * 1024

// Fatal: a byte sequence that is not well-formed UTF-8 (a Latin-1 é, an encoded surrogate) is an error,
// never a U+FFFD that different passwords would share. ignoreBOM keeps a leading BOM in the text, where
// the JSON parser skips exactly one (RFC 8259 §8.1 lets a parser ignore it).
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

// What may follow the media type (contract §2): nothing, or one charset=utf-8, any case, quoted or not.
const UTF8_ONLY = /^[^;]*(?:;\s*charset\s*=\s*(?:utf-8|"utf-8")\s*)?$/i

/** Drops the request's Content-Type, when there is one (deleting a missing key would cost a slow dictionary). */
export function forgetContentType (request: FastifyRequest): void {
  if (request.headers['content-type'] !== undefined) delete request.headers['content-type']
}

/** Whether a Content-Type has no parameter, or only charset=utf-8: any other parameter or charset is a 415. */
export function declaresOnlyUtf8 (contentType: string): boolean {
  return UTF8_ONLY.test(contentType)
}

/**
 * Only `application/json` in UTF-8; other media types and other charsets get 415, bytes that are not
 * well-formed UTF-8 get 400. The size limit applies before any of it. Prototype poisoning is an error.
 */
export function acceptJsonOnly (app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (request, body, done) => {
    if (!declaresOnlyUtf8(String(request.headers['content-type']))) {
      done(requestError('FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE'), undefined)
      return
    }
    let text: string
    try {
      text = UTF8.decode(body as Buffer)
    } catch {
      done(requestError('FST_PWAUTH_MALFORMED_BODY'), undefined)
      return
    }
    parseJson(request, text, done)
  })
}

/**
 * Reads (up to the body limit) and discards any body, whatever its media type. The Content-Type header
 * goes first (in an onRequest hook, with forgetContentType), because Fastify answers a malformed one with
 * 415 before any parser runs.
 */
export function ignoreBody (app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, _body, done) => { done(null, undefined) })
}
