import t, { type Test } from 'tap'
import { passwordAuthClientErrorHandler } from '../../../lib/index.js'
import { buildTestApp } from '../../helpers/app.js'
import { expectProblem as expectContractProblem } from '../../helpers/problem.js'
import { rawRequest, type RawResponse } from '../../helpers/raw-http.js'
import { startServer } from '../../helpers/server-process.js'

const HUGE_HEADER = `POST /Auth/Logout HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${'a'.repeat(100_000)}\r\n\r\n`
const MALFORMED = [
  ['Content-Length and Transfer-Encoding together', 'POST /Auth/Login HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
  ['a bad chunk size', 'POST /Auth/Login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
  ['no HTTP at all', 'HELLO\r\n\r\n'],
  ['a space in a header name', 'GET /health HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n']
] as const

/** Written on the raw socket: the contract's problem, framed by hand, and the connection closed. */
function expectProblem (t: Test, response: RawResponse, status: number, code: string, name: string): void {
  expectContractProblem(t, response, status, code, name)
  t.equal(response.headers.connection, 'close', `${name}: Connection: close`)
  t.equal(Number(response.headers['content-length']), Buffer.byteLength(response.body), `${name}: Content-Length`)
}

t.test('passwordAuthClientErrorHandler answers what Node cannot parse as problem+json', async (t) => {
  const { app } = await buildTestApp(t, { fastify: { clientErrorHandler: passwordAuthClientErrorHandler } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  expectProblem(t, await rawRequest(port, HUGE_HEADER), 431, 'FST_PWAUTH_HEADERS_TOO_LARGE', 'a 100 KB Authorization header')
  for (const [name, request] of MALFORMED) expectProblem(t, await rawRequest(port, request), 400, 'FST_PWAUTH_MALFORMED_REQUEST', name)
  const answered = await rawRequest(port, 'POST /Auth/Login HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n')
  expectContractProblem(t, answered, 415, 'FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE', 'a bad chunk after the 415 for a missing Content-Type')
  const fine = await rawRequest(port, 'POST /Auth/Logout HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
  t.equal(fine.status, 401, 'the server still answers well-formed requests')
})

t.test('a socket that is gone or closing gets nothing written', async (t) => {
  const writes: unknown[] = []
  let destroyed = 0
  const socket = (state: { destroyed: boolean, writable: boolean }) =>
    ({ ...state, write: (data: unknown) => { writes.push(data) }, destroy: () => { destroyed++ } }) as never
  const fastify = { log: { debug: () => {} } } as never
  passwordAuthClientErrorHandler.call(fastify, Object.assign(new Error('reset'), { code: 'ECONNRESET' }), socket({ destroyed: false, writable: true }))
  passwordAuthClientErrorHandler.call(fastify, Object.assign(new Error('parse'), { code: 'HPE_INVALID_METHOD' }), socket({ destroyed: true, writable: false }))
  passwordAuthClientErrorHandler.call(fastify, new Error('no code'), socket({ destroyed: false, writable: false }))
  const answering = Object.assign(socket({ destroyed: false, writable: true }), { _httpMessage: { headersSent: true } })
  passwordAuthClientErrorHandler.call(fastify, Object.assign(new Error('parse'), { code: 'HPE_INVALID_CHUNK_SIZE' }), answering)
  t.same(writes, [], 'nothing written, not even after an answer already under way')
  t.equal(destroyed, 2, 'a socket that cannot be written to, or is answering already, is still closed')
})

t.test('the example server uses it', async (t) => {
  const server = await startServer(t)
  const port = Number(new URL(server.url).port)
  expectProblem(t, await rawRequest(port, HUGE_HEADER), 431, 'FST_PWAUTH_HEADERS_TOO_LARGE', 'a 100 KB Authorization header')
  expectProblem(t, await rawRequest(port, MALFORMED[0][1]), 400, 'FST_PWAUTH_MALFORMED_REQUEST', MALFORMED[0][0])
})
