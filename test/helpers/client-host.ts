import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import type { PasswordAuthOptions } from '../../lib/index.js'
import { buildTestApp, type TestApp } from './app.js'
import { freePort } from './free-port.js'

// A host of its own in Chromium: a page served by the host's Fastify app, same origin as the plugin's routes,
// that imports fastify-password-auth/client from the built package (resolved through package.json's exports,
// as an installed package is) and @simplewebauthn/browser through an import map.
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

const require = createRequire(import.meta.url)
const CLIENT_DIR = dirname(require.resolve('fastify-password-auth/client'))
const WEBAUTHN_DIR = dirname(require.resolve('@simplewebauthn/browser').replace(/[\\/]script[\\/]/, '/esm/'))

export interface ClientHost extends TestApp {
  /** http://localhost:<port>: passkeys need a name, not an IP address. */
  url: string
  /** Requests seen per path (e.g. '/Auth/Refresh'), since the last reset. */
  seen: Map<string, number>
}

/**
 * The plugin on memory stores with ada (test/helpers/app.ts), GET /me guarded, `pages` and `routes` of the test's own, and the host page at `/`:
 * `/?mode=token` makes a token-mode client; `&nolocks` hides Web Locks from it (the fallback). The page puts
 * the client on `window.auth`, what its onSessionEnded heard on `window.ended`, and `window.signedIn`.
 */
export async function clientHost (t: Test, auth: Partial<PasswordAuthOptions> | ((url: string) => Partial<PasswordAuthOptions>) = {},
  { pages = {}, routes }: { pages?: Record<string, string>, routes?: (app: FastifyInstance) => void } = {}): Promise<ClientHost> {
  const port = await freePort()
  const url = `http://localhost:${port}`
  const seen = new Map<string, number>()
  const built = await buildTestApp(t, {
    auth: { jwt: { secret: 'a-client-test-secret-of-at-least-32-bytes', expiresIn: 2 }, refresh: { cookie: true }, ...typeof auth === 'function' ? auth(url) : auth },
    before: (app) => {
      app.addHook('onRequest', (request, _reply, done) => {
        const path = request.url.split('?')[0]!
        seen.set(path, (seen.get(path) ?? 0) + 1)
        done()
      })
    },
    routes: (app) => {
      for (const [path, html] of Object.entries({ '/': PAGE, ...pages })) {
        app.get(path, async (_request, reply) => await reply.type('text/html; charset=utf-8').send(html))
      }
      app.get('/client/:file', async (request, reply) => await sendFile(reply, CLIENT_DIR, (request.params as { file: string }).file))
      routes?.(app)
      app.get('/vendor/simplewebauthn/*', async (request, reply) => await sendFile(reply, WEBAUTHN_DIR, (request.params as Record<string, string>)['*']!))
    }
  })
  await built.app.listen({ host: '127.0.0.1', port })
  return { ...built, url, seen }
}

async function sendFile (reply: { code: (n: number) => { send: () => unknown }, type: (t: string) => { send: (b: Buffer) => unknown } }, dir: string, file: string): Promise<unknown> {
  if (!/^[\w/-]+\.js$/.test(file) || file.includes('..')) return reply.code(404).send()
  try {
    return reply.type('text/javascript; charset=utf-8').send(await readFile(join(dir, file)))
  } catch {
    return reply.code(404).send()
  }
}

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>host</title>
<script type="importmap">{ "imports": { "@simplewebauthn/browser": "/vendor/simplewebauthn/index.js" } }</script>
<script type="module">
  const query = new URLSearchParams(location.search)
  if (query.has('nolocks')) Object.defineProperty(navigator, 'locks', { value: undefined })
  const { createAuthClient, AuthError } = await import('/client/index.js')
  window.AuthError = AuthError
  window.auth = createAuthClient({ mode: query.get('mode') ?? 'cookie' })
  window.ended = []
  auth.onSessionEnded((reason) => { ended.push(reason) })
  window.signedIn = await auth.signedIn()
  document.title = 'ready'
</script></head><body></body></html>`

/** One Chromium for a test file (each test takes a browser context of its own: its own storage, locks and channels). */
export async function launch (t: Test): Promise<Browser> {
  // Background tabs keep their timers: ten tabs act at once, as ten windows would.
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-timer-throttling', '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows'],
    protocolTimeout: 60_000
  })
  t.teardown(async () => { await browser.close() })
  return browser
}

/** A browser context of `browser` for one test, closed after it. */
export async function context (t: Test, browser: Browser): Promise<BrowserContext> {
  const made = await browser.createBrowserContext()
  t.teardown(async () => { await made.close() })
  return made
}

/** A new tab of `browser` on the host page, once its client is made. */
export async function openHostPage (browser: Browser | BrowserContext, url: string): Promise<Page> {
  const page = await browser.newPage()
  await page.goto(url)
  await page.waitForFunction('document.title === "ready"', { timeout: 30_000 })
  return page
}
