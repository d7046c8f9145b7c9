import type { FastifyRequest } from 'fastify'

export const SECRET_FIELDS = [
  'password', 'currentPassword', 'newPassword', 'confirmNewPassword', 'passwordHash', 'accessToken', 'refreshToken', 'deviceToken',
  'token', 'mfaToken', 'recoveryCodes', 'secret', 'otpauthUrl', 'confirmPassword'
]
/** Secret in a request or response body, but a harmless name elsewhere (an error's `code`): redacted in bodies only. */
export const SECRET_BODY_FIELDS = ['code', 'response']
/** Headers that carry a token or the refresh cookie. */
export const SECRET_HEADERS = ['authorization', 'cookie', 'set-cookie']

/**
 * Pino `redact` paths for a host logger that logs request headers or bodies: the plugin itself never
 * logs a password, hash or token, but a custom request serializer could. Pino's `*` matches one level,
 * so each field is listed at the top level and one and two levels down (`req.body.password`).
 *
 * @deprecated Use `passwordAuthLogger()`: with these wildcard paths pino redacts every child logger's
 * bindings, about 10 µs on every request at any log level.
 */
export const passwordAuthRedactPaths: readonly string[] = Object.freeze([
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.*.${field}`]),
  ...SECRET_BODY_FIELDS.flatMap((field) => [`body.${field}`, `*.body.${field}`, `*.*.body.${field}`])
])

/** Query parameters whose values never reach a log line, as a token or password sent in the URL would. */
const SECRET_QUERY = /^(access_token|refresh_token|id_token|token|code|password)$/i

/** `url` with the values of secret query parameters replaced by `[Redacted]`. */
export function redactUrl (url: string): string {
  // A host may log its own object under `req`: no URL, nothing to redact.
  const question = typeof url === 'string' ? url.indexOf('?') : -1
  if (question === -1) return url
  const query = url.slice(question + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=')
    const name = equals === -1 ? pair : pair.slice(0, equals)
    let decoded = name
    try { decoded = decodeURIComponent(name.replace(/\+/g, ' ')) } catch {}
    return equals !== -1 && SECRET_QUERY.test(decoded) ? `${name}=[Redacted]` : pair
  })
  return `${url.slice(0, question)}?${query.join('&')}`
}

/**
 * Fastify's request serializer, with secret query parameters redacted: the plugin refuses a token sent as
 * `?access_token=`, but Fastify logs the request line before any route runs. For request logging:
 *
 * ```ts
 * Fastify({ logger: { redact: [...passwordAuthRedactPaths], serializers: { req: passwordAuthRequestSerializer } } })
 * ```
 */
export function passwordAuthRequestSerializer (request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort
  }
}
