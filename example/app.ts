import { readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import passwordAuth, { authenticate, passwordAuthClientErrorHandler, type HashingStats, type PasswordAuthOptions } from '../lib/index.js'
import type { ServerTimeouts } from './timeouts.js'
import { Account } from './account-schema.js'
import { registerQrRoute } from './qr.js'

export interface AppOptions {
  auth: PasswordAuthOptions
  logger?: FastifyServerOptions['logger']
  /**
   * Fastify's two log lines per request ("incoming request", "request completed"); default off. The
   * plugin's audit events and errors are logged either way.
   */
  requestLogging?: boolean
  /** Server timeouts (example/timeouts.ts). */
  server?: ServerTimeouts
  /** Answers GET /health: resolves when the stores are reachable, rejects when not. */
  healthCheck?: () => Promise<void>
  /** Everything but /docs under this prefix (e.g. '/portal'), as a host that mounts the demo would. */
  prefix?: string
  /** Called with each registration's hashing counters (the API's, the browser app's). */
  onHashing?: (stats: () => HashingStats) => void
}

const Health = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['ok', 'unavailable'] } },
  required: ['status'],
  additionalProperties: false
} as const

/**
 * The demo server: the plugin, GET /me, GET /health, the OpenAPI document with its page at /docs, and a
 * browser app at / that uses a second registration in cookie mode under /app.
 */
export async function buildApp ({ auth, logger = false, requestLogging = false, server = {}, healthCheck = async () => {}, prefix = '', onHashing }: AppOptions): Promise<FastifyInstance> {
  // Requests Node cannot parse get problem+json too. Request logging off by default: two serialised log
  // lines per request cost more than an authenticated request itself (example/docs/example-server.md).
  const app = Fastify({
    ...server,
    logger,
    logController: new LogController({ disableRequestLogging: !requestLogging }),
    clientErrorHandler: passwordAuthClientErrorHandler
  })

  await app.register(swagger, {
    openapi: {
      info: { title: 'fastify-password-auth example', version: '1.0.0' },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } }
    },
    // Logout reads the bearer token itself (no guard): the page's "Authorize" must send it there too.
    transform: ({ schema, url }) => ({
      // The browser app's registration (/app/…) repeats the API's routes: the document shows them once.
      schema: url.includes('/app/') ? { ...schema, hide: true } : url.endsWith('/Logout') ? { ...schema, security: [{ bearerAuth: [] }] } : schema,
      url
    })
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  await app.register(async function site (site) {
    // The API, in the mode the server was started with (token mode unless AUTH_REFRESH_COOKIE=on).
    await site.register(async function api (api) {
      await api.register(passwordAuth, { sessionRoutes: true, ...auth })
      onHashing?.(() => api.passwordAuth.stats())
      api.get('/me', {
        onRequest: authenticate,
        schema: { summary: 'The signed-in account', tags: ['Example'], security: [{ bearerAuth: [] }], response: { 200: Account } }
      }, async (request) => request.account)
    })
    // The browser app's own registration beside it, in cookie mode under /app: same stores and keys.
    await site.register(async function browserApi (browser) {
      const refresh = auth.refresh === false || auth.refresh === undefined ? {} : auth.refresh
      await browser.register(passwordAuth, { sessionRoutes: true, ...auth, refresh: { ...refresh, cookie: true } })
      onHashing?.(() => browser.passwordAuth.stats())
      browser.get('/me', { onRequest: authenticate, schema: { hide: true, response: { 200: Account } } }, async (request) => request.account)
      if (auth.mfa !== undefined && auth.mfa !== false) registerQrRoute(browser)
    }, { prefix: '/app' })

    site.get('/health', {
      schema: { summary: 'Liveness and store reachability', tags: ['Example'], response: { 200: Health, 503: Health } }
    }, async (request, reply) => {
      try {
        await healthCheck()
        return { status: 'ok' }
      } catch (err) {
        request.log.error({ err }, 'health check failed')
        return await reply.code(503).send({ status: 'unavailable' })
      }
    })
    await serveBrowserApp(site, prefix)
  }, { prefix })

  return app
}

const PUBLIC = new URL('../../example/public/', import.meta.url)
// @simplewebauthn/browser's UMD bundle (it sets globalThis.SimpleWebAuthnBrowser), served as the page's own file.
const WEBAUTHN_BUNDLE = new URL('../dist/bundle/index.umd.min.js', `file://${createRequire(import.meta.url).resolve('@simplewebauthn/browser')}`)
// fastify-password-auth/client, as built (dist/lib/client/), under client/: the app imports it from there.
const CLIENT = new URL('../lib/client/', import.meta.url)
const CLIENT_FILES = Object.fromEntries(readdirSync(CLIENT).filter((name) => name.endsWith('.js'))
  .map((name) => [`client/${name}`, [new URL(name, CLIENT), 'text/javascript'] as const]))
const FILES: Record<string, readonly [string | URL, string]> = {
  '': ['index.html', 'text/html'],
  'app.js': ['app.js', 'text/javascript'],
  'app.css': ['app.css', 'text/css'],
  'passkeys.js': ['passkeys.js', 'text/javascript'],
  'webauthn.js': [WEBAUTHN_BUNDLE, 'text/javascript'],
  ...CLIENT_FILES
}
// The app's own files only (and the set-up QR code as a data: image): no inline script or style, no other origin, no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

/** The browser app: its static files, read once, under the site's prefix (`/portal` redirects to `/portal/`). */
async function serveBrowserApp (site: FastifyInstance, prefix: string): Promise<void> {
  for (const [path, [file, type]] of Object.entries(FILES)) {
    const body = await readFile(new URL(file, PUBLIC))
    // prefixTrailingSlash: the page is `${prefix}/` only, so its relative URLs resolve under the prefix.
    site.get(`/${path}`, { schema: { hide: true }, prefixTrailingSlash: 'slash' }, async (_request, reply) =>
      await reply.type(`${type}; charset=utf-8`).header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').send(body))
  }
  if (prefix !== '') site.get('/', { schema: { hide: true }, prefixTrailingSlash: 'no-slash' }, async (_request, reply) => await reply.redirect(`${prefix}/`))
}
