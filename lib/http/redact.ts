const SECRET_FIELDS = ['password', 'currentPassword', 'newPassword', 'confirmNewPassword', 'passwordHash', 'accessToken', 'refreshToken']

/**
 * Pino `redact` paths for a host logger that logs request headers or bodies: the plugin itself never
 * logs a password, hash or token, but a custom request serializer could. Pino's `*` matches one level,
 * so each field is listed at the top level and one and two levels down (`req.body.password`).
 *
 * ```ts
 * Fastify({ logger: { redact: [...passwordAuthRedactPaths] } })
 * ```
 */
export const passwordAuthRedactPaths: readonly string[] = Object.freeze([
  'req.headers.authorization',
  'req.headers.cookie',
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.*.${field}`])
])
