import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyPluginCallback } from 'fastify'
import { invalidOption } from '../errors.js'

// The part of @fastify/cookie used here, declared locally: it is an optional peer dependency, and its
// type augmentation must not reach hosts that do not install it.
interface CookieOptions { httpOnly: boolean, secure: boolean, sameSite: 'strict', path: string, maxAge: number }
interface CookieReply { setCookie (name: string, value: string, options: CookieOptions): FastifyReply }
interface CookieRequest { cookies?: Record<string, string | undefined> }

/** The refresh token in an HttpOnly cookie that only the plugin's routes receive (cookie mode). */
export interface RefreshCookie {
  name: string
  path: string
  read (request: FastifyRequest): string | undefined
  set (reply: FastifyReply, token: string, maxAgeSeconds: number): void
  clear (reply: FastifyReply): void
}

async function loadCookiePlugin (): Promise<FastifyPluginCallback> {
  return (await import('@fastify/cookie' as string) as { default: FastifyPluginCallback }).default
}

/**
 * Registers @fastify/cookie in the plugin's own context, unless the host's is already there, and builds
 * the cookie: HttpOnly, Secure, SameSite=Strict, limited to the routes' prefix.
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
  const attributes = { httpOnly: true, secure: true, sameSite: 'strict', path: prefix === '' ? '/' : prefix } as const
  return {
    name,
    path: attributes.path,
    read: (request) => (request as unknown as CookieRequest).cookies?.[name],
    set: (reply, token, maxAgeSeconds) => { (reply as unknown as CookieReply).setCookie(name, token, { ...attributes, maxAge: maxAgeSeconds }) },
    clear: (reply) => { (reply as unknown as CookieReply).setCookie(name, '', { ...attributes, maxAge: 0 }) }
  }
}
