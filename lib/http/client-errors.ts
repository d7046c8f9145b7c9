import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { requestError, type RequestErrorCode } from '../common/errors.js'
import { toProblem } from './problem.js'

/** What Node's HTTP parser reports, as the contract's problems; every other parse error is a 400. */
const CLIENT_ERRORS: Record<string, RequestErrorCode> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'FST_PWAUTH_REQUEST_TIMEOUT',
  HPE_HEADER_OVERFLOW: 'FST_PWAUTH_HEADERS_TOO_LARGE'
}

/**
 * Fastify's `clientErrorHandler` for a host that wants the contract's shape at the transport level too:
 * a request Node cannot parse (bad framing, headers over `maxHeaderSize`) or that did not arrive within
 * `requestTimeout`/`headersTimeout` gets problem+json with `Cache-Control: no-store` and
 * `Connection: close`, written on the raw socket, which is then closed.
 *
 * ```ts
 * const app = Fastify({ clientErrorHandler: passwordAuthClientErrorHandler })
 * ```
 */
export function passwordAuthClientErrorHandler (this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // A reset connection is gone already: nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const problem = toProblem(requestError(CLIENT_ERRORS[error.code ?? ''] ?? 'FST_PWAUTH_MALFORMED_REQUEST'))
  this.log.debug({ code: error.code, status: problem.status }, 'fastify-password-auth: client error')
  // As Node does: once the request in flight has started its answer (a 415 before a malformed body, say),
  // a second answer on the same socket would corrupt it for the client; closing is all that is left.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent: boolean } })._httpMessage
  if (socket.writable && inFlight?.headersSent !== true) {
    const body = JSON.stringify(problem)
    socket.write(`HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
      'Content-Type: application/problem+json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Cache-Control: no-store\r\nConnection: close\r\n\r\n' + body)
  }
  socket.destroy()
}
