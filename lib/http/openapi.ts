import {
  challengeOf, hasRetryAfter, problemType, statusOf, titleOf, WEAK_PASSWORD_REASONS, type Challenge, type RequestErrorCode
} from '../common/errors.js'

/** A JSON schema, or an OpenAPI response as @fastify/swagger reads it from `schema.response`. */
export type JsonObject = Record<string, unknown>
export type ResponseHeaders = Record<string, JsonObject>

// In code spans: OpenAPI descriptions are Markdown, and a bare `<realm>` would be read as an HTML tag (Swagger showed realm="").
const CHALLENGES: Record<Challenge, string> = {
  bearer: '`Bearer realm="<realm>"`',
  invalid_token: '`Bearer realm="<realm>", error="invalid_token"`',
  insufficient_user_authentication: '`Bearer realm="<realm>", error="insufficient_user_authentication", max_age=<seconds>`'
}

function noStore (): ResponseHeaders {
  return { 'Cache-Control': { type: 'string', enum: ['no-store'], description: 'Never stored by caches.' } }
}

function problemHeaders (codes: readonly RequestErrorCode[]): ResponseHeaders {
  const headers = noStore()
  if (codes.some(hasRetryAfter)) headers['Retry-After'] = { type: 'integer', minimum: 1, description: 'Seconds to wait before trying again.' }
  const challenges = [...new Set(codes.flatMap((code) => challengeOf(code) ?? []))]
  if (challenges.length > 0) {
    headers['WWW-Authenticate'] = { type: 'string', description: challenges.map((challenge) => CHALLENGES[challenge]).join(' or ') }
  }
  return headers
}

function problemSchema (status: number, codes: readonly RequestErrorCode[]): JsonObject {
  const properties: JsonObject = {
    type: { type: 'string', enum: codes.map(problemType) },
    title: { type: 'string', enum: [...new Set(codes.map(titleOf))] },
    status: { type: 'integer', enum: [status] },
    detail: { type: 'string' },
    code: { type: 'string', enum: [...codes] }
  }
  if (codes.includes('FST_PWAUTH_VALIDATION')) {
    properties.errors = {
      type: 'array',
      description: 'FST_PWAUTH_VALIDATION: the failed input rules, one per JSON pointer into the body.',
      items: { type: 'object', required: ['pointer', 'detail'], properties: { pointer: { type: 'string' }, detail: { type: 'string' } } }
    }
  }
  if (codes.includes('FST_PWAUTH_WEAK_PASSWORD')) {
    properties.reasons = {
      type: 'array',
      description: 'FST_PWAUTH_WEAK_PASSWORD: why the policy refused newPassword.',
      items: { type: 'string', enum: [...WEAK_PASSWORD_REASONS] }
    }
  }
  return { type: 'object', required: ['type', 'title', 'status', 'detail', 'code'], properties, description: 'RFC 9457 problem details.' }
}

/**
 * The problem+json responses of `codes`, one per status: the codes as an enum, the headers each carries
 * (`Cache-Control`, and `Retry-After` / `WWW-Authenticate` where a code has them), plus `extra` headers by
 * status. Fresh objects at every call: tools may edit what they are given.
 */
export function problemResponses (codes: readonly RequestErrorCode[], extra: Record<number, ResponseHeaders> = {}): Record<number, JsonObject> {
  const byStatus = new Map<number, RequestErrorCode[]>()
  for (const code of codes) byStatus.set(statusOf(code), [...byStatus.get(statusOf(code)) ?? [], code])
  const responses: Record<number, JsonObject> = {}
  for (const [status, group] of byStatus) {
    responses[status] = {
      description: group.map((code) => `${code}: ${titleOf(code)}.`).join(' '),
      headers: { ...problemHeaders(group), ...extra[status] },
      content: { 'application/problem+json': { schema: problemSchema(status, group) } }
    }
  }
  return responses
}

/** A 200 with a JSON body. */
export function jsonResponse (description: string, schema: JsonObject, headers: ResponseHeaders = {}): JsonObject {
  return { description, headers: { ...noStore(), ...headers }, content: { 'application/json': { schema } } }
}

/** A 204. */
export function noContentResponse (description: string, headers: ResponseHeaders = {}): JsonObject {
  return { description, headers: { ...noStore(), ...headers }, type: 'null' }
}

/** `Set-Cookie` of cookie mode: the refresh token is set, or cleared with an empty value and Max-Age=0. */
export function setCookieHeader (cookie: { name: string, path: string }, what: 'set' | 'cleared'): ResponseHeaders {
  const value = what === 'set' ? '<refresh token>' : ''
  return {
    'Set-Cookie': {
      type: 'string',
      description: `Cookie mode: the refresh token is ${what}: ${cookie.name}=${value}; Path=${cookie.path}; ` +
        `Max-Age=${what === 'set' ? '<refreshExpiresIn>' : '0'}; HttpOnly; Secure; SameSite=Strict`
    }
  }
}

/** The errors every route that reads a JSON body can answer. */
export const BODY_ERRORS = [
  'FST_PWAUTH_VALIDATION', 'FST_PWAUTH_MALFORMED_BODY', 'FST_PWAUTH_BODY_TOO_LARGE', 'FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE'
] as const satisfies readonly RequestErrorCode[]

/** What the `authenticate` guard answers instead of running the route. */
export const AUTHENTICATE_ERRORS = ['FST_PWAUTH_TOKEN_MISSING', 'FST_PWAUTH_TOKEN_INVALID', 'FST_PWAUTH_UNAVAILABLE'] as const satisfies readonly RequestErrorCode[]

/**
 * The responses the `authenticate` guard adds to a host route, for its OpenAPI document:
 * `schema: { response: { 200: …, ...authenticateResponses() } }`. `authenticated()` adds them itself.
 */
export function authenticateResponses (): Record<number, JsonObject> {
  return problemResponses(AUTHENTICATE_ERRORS)
}

/** What the guard with a recent-authentication demand answers (401 carries both codes). */
export function recentAuthenticationResponses (): Record<number, JsonObject> {
  return problemResponses([...AUTHENTICATE_ERRORS, 'FST_PWAUTH_REAUTHENTICATION_REQUIRED'])
}

/**
 * A guarded route's problem responses: its own `codes` and the guard's (`recent`: with a recent-authentication
 * demand) in one response per status, so a 401 of the route's own (a wrong password or code) is not replaced by the guard's.
 */
export function guardedProblemResponses (codes: readonly RequestErrorCode[], { recent = false } = {}): Record<number, JsonObject> {
  return problemResponses([...new Set([...codes, ...AUTHENTICATE_ERRORS, ...recent ? ['FST_PWAUTH_REAUTHENTICATION_REQUIRED' as const] : []])])
}
