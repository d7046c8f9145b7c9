import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyPluginCallback } from 'fastify'
import { invalidOption } from '../errors.js'

// The part of @fastify/cookie used here, declared locally: it is an optional peer dependency, and its
// type augmentation must not reach hosts that do not install it.
interface CookieOptions { httpOnly: boolean, secure: boolean, sameSite: 'strict', path: string, maxAge: number }
interface CookieReply { setCookie (name: string, value: string, options: CookieOptions): FastifyReply }

/**
 * What a request carries under the cookie's name. `several`: a cookie planted by a sibling subdomain
 * (cookie tossing) arrives beside the real one, and nothing tells which is which, so none is used and
 * none is cleared. `cross-site`: the browser says another site sent the request; the cookie is not used.
 */
export type CookieRead = { kind: 'one', token: string } | { kind: 'none' | 'several' | 'cross-site' }

/** The refresh token in an HttpOnly cookie that only the plugin's routes receive (cookie mode). */
export interface RefreshCookie {
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
 * True when the browser says the request comes from another site: `Sec-Fetch-Site: cross-site`, or an
 * opaque `Origin: null` (sandboxed frames, some redirects). A cross-origin app on the same site (another
 * subdomain, with @fastify/cors) is `same-site` and keeps working.
 */
export function isCrossSite (request: FastifyRequest): boolean {
  return request.headers['sec-fetch-site'] === 'cross-site' || request.headers.origin === 'null'
}

async function loadCookiePlugin (): Promise<FastifyPluginCallback> {
  return (await import('@fastify/cookie' as string) as { default: FastifyPluginCallback }).default
}

/**
 * Registers @fastify/cookie in the plugin's own context, unless the host's is already there, and builds
 * the cookie: HttpOnly, Secure, SameSite=Strict, limited to `prefix`, the routes' full prefix (the host's
 * included). A `__Host-` name must have Path=/ (browsers refuse it otherwise): it then reaches every route.
 */
export async function createRefreshCookie (routes: FastifyInstance, name: string, prefix: string, load = loadCookiePlugin): Promise<RefreshCookie> {
  if (!routes.hasReplyDecorator('setCookie')) {
    let plugin: FastifyPluginCallback
    try {
      plugin = await load()
    } catch {
      throw invalidOption('refresh.cookie needs @fastify/cookie: npm install @fastify/cookie')
    }
    await routes.register(plugin)
  }
  const path = prefix === '' || name.startsWith('__Host-') ? '/' : prefix
  const attributes = { httpOnly: true, secure: true, sameSite: 'strict', path } as const
  return {
    name,
    path: attributes.path,
    read: (request) => {
      if (isCrossSite(request)) return { kind: 'cross-site' }
      const values = cookieValues(request.headers.cookie, name)
      if (values.length > 1) return { kind: 'several' }
      return values.length === 1 ? { kind: 'one', token: values[0]! } : { kind: 'none' }
    },
    set: (reply, token, maxAgeSeconds) => { (reply as unknown as CookieReply).setCookie(name, token, { ...attributes, maxAge: maxAgeSeconds }) },
    clear: (reply) => { (reply as unknown as CookieReply).setCookie(name, '', { ...attributes, maxAge: 0 }) }
  }
}
