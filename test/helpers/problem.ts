import type { LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import type { RawResponse } from './raw-http.js'

/**
 * Checks that an answer (from inject or a raw socket) is the contract's problem+json: the status, the media
 * type, `Cache-Control: no-store` and the RFC 9457 shape with the code. Returns the parsed problem.
 */
export function expectProblem (t: Test, response: LightMyRequestResponse | RawResponse, status: number, code: string, name = code): any {
  const [actual, headers] = 'statusCode' in response ? [response.statusCode, response.headers] : [response.status, response.headers]
  t.equal(actual, status, `${name}: ${status}`)
  t.equal(headers['content-type'], 'application/problem+json; charset=utf-8', `${name}: problem+json`)
  t.equal(headers['cache-control'], 'no-store', `${name}: no-store`)
  const problem = JSON.parse(response.body)
  t.match(problem, { type: /^urn:fastify-password-auth:problem:[a-z-]+$/, title: String, status, detail: String, code }, `${name}: the contract's shape`)
  return problem
}
