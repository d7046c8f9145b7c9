import { createHmac, sign, type KeyObject } from 'node:crypto'

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

/**
 * Builds a JWT by hand, so tests can make every kind of forged or malformed token.
 * `key`: an HMAC secret (HS256/HS512), a private key (EdDSA/ES256), or undefined for no signature.
 */
export function forgeJwt (header: Record<string, unknown>, payload: Record<string, unknown>, key?: string | KeyObject): string {
  const input = `${encode(header)}.${encode(payload)}`
  if (key === undefined) return `${input}.`
  const alg = header.alg
  let signature: Buffer
  if (typeof key === 'string') {
    signature = createHmac(alg === 'HS512' ? 'sha512' : 'sha256', key).update(input).digest()
  } else if (alg === 'ES256') {
    signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
  } else {
    signature = sign(null, Buffer.from(input), key)
  }
  return `${input}.${signature.toString('base64url')}`
}

/** The claims the plugin issues, valid now, for `sub` in session `sid` with credential version 0. */
export function validClaims (sub: string, sid: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000)
  return {
    sub,
    sid,
    jti: 'q6R0sXvDqk7rQyH7hY2dNw',
    cv: 0,
    iat: now,
    exp: now + 900,
    iss: 'fastify-password-auth',
    aud: 'fastify-password-auth',
    ...overrides
  }
}
