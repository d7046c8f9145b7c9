import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * What a request carries under the cookie's name. `several`: a cookie planted by a sibling subdomain
 * (cookie tossing) arrives beside the real one, and nothing tells which is which, so none is used and
 * none is cleared. `cross-site`: the browser says another site sent the request; the cookie is not used.
 */
export type CookieRead = { kind: 'one', token: string } | { kind: 'none' | 'several' | 'cross-site' }

/**
 * A token in an HttpOnly, Secure, SameSite=Strict cookie that only the plugin's routes receive: in cookie
 * mode, the refresh token's cookie and the device token's.
 */
export interface SecureCookie {
  name: string
  path: string
  read (request: FastifyRequest): CookieRead
  set (reply: FastifyReply, token: string, maxAgeSeconds: number): void
  clear (reply: FastifyReply): void
}

/** The values of every cookie named `name` in a Cookie header, in the order sent. */
export function cookieValues (header: string | undefined, name: string): string[] {
  if (header === undefined) return []
  const values: string[] = []
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=')
    if (equals !== -1 && pair.slice(0, equals).trim() === name) values.push(pair.slice(equals + 1).trim())
  }
  return values
}

/**
 * True when the request says it comes from elsewhere (contract §12): `Sec-Fetch-Site: cross-site`, an opaque
 * `Origin: null` (sandboxed frames, some redirects), or an `Origin` naming another host than the request's own
 * and none of `origins` (another subdomain's app, with @fastify/cors, is listed there). The scheme is not
 * compared with the request's: behind a proxy that ends TLS the server sees http for an https page.
 */
export function isCrossSite (request: FastifyRequest, origins: readonly string[] = []): boolean {
  const { origin } = request.headers
  if (request.headers['sec-fetch-site'] === 'cross-site' || origin === 'null') return true
  if (origin === undefined || origins.includes(origin)) return false
  try {
    return new URL(origin).host !== request.host
  } catch {
    return true
  }
}

/**
 * Adds a Set-Cookie line to the reply. Fastify's reply.header() appends to set-cookie rather than replacing
 * it, so the lines already there (the other cookie, a host's @fastify/cookie) stay, each once.
 */
function appendSetCookie (reply: FastifyReply, line: string): void {
  reply.header('set-cookie', line)
}

/**
 * A cookie of cookie mode: HttpOnly, Secure, SameSite=Strict, limited to `prefix`, the routes' full prefix (the
 * host's included). A `__Host-` name must have Path=/ (browsers refuse it otherwise): it then reaches every
 * route. Written by hand (refresh and device tokens are base64url and dots, nothing to encode), so cookie mode needs
 * no cookie plugin and works on host routes too (`passwordAuth.sessions.start`).
 */
export function createSecureCookie (name: string, prefix: string, origins: readonly string[] = []): SecureCookie {
  const path = prefix === '' || name.startsWith('__Host-') ? '/' : prefix
  const attributes = `Path=${path}; HttpOnly; Secure; SameSite=Strict`
  return {
    name,
    path,
    read: (request) => {
      if (isCrossSite(request, origins)) return { kind: 'cross-site' }
      const values = cookieValues(request.headers.cookie, name)
      if (values.length > 1) return { kind: 'several' }
      return values.length === 1 ? { kind: 'one', token: values[0]! } : { kind: 'none' }
    },
    set: (reply, token, maxAgeSeconds) => { appendSetCookie(reply, `${name}=${token}; Max-Age=${maxAgeSeconds}; ${attributes}`) },
    clear: (reply) => { appendSetCookie(reply, `${name}=; Max-Age=0; ${attributes}`) }
  }
}
