import { existsSync } from 'node:fs'
import t from 'tap'
import { authenticate } from '../../../lib/index.js'
import { PASSWORD } from '../../helpers/app.js'
import { CHROMIUM, clientHost, context, launch } from '../../helpers/client-host.js'
import { readmeBlock } from '../../helpers/docs.js'

// The README's browser client (Browser apps), run as written in Chromium: a page of the host imports
// fastify-password-auth/client by that name (an import map points it at the built package's file), with the
// plugin under /api/Auth and the host's guarded /api/me beside it.
const missing = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
if (missing !== false && process.env.CI !== undefined) throw new Error(`CI: ${missing}`)

const block = readmeBlock('browser-client')
const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>readme</title>
<script type="importmap">{ "imports": { "fastify-password-auth/client": "/client/index.js" } }</script>
<script type="module">
window.shown = []
const showSignIn = () => { shown.push('sign-in') }
const askForCode = async () => { throw new Error('ada has no second factor') }
const email = 'ada@example.com'
const password = ${JSON.stringify(PASSWORD)}
${block}
window.readme = { auth, signedIn, result, me: { status: me.status, email: (await me.json()).email } }
document.title = 'ready'
</script></head><body></body></html>`

t.test('the README\'s browser client: signed out at load, signs in, calls the host\'s route; a logout shows the sign-in', { skip: missing }, async (t) => {
  t.match(block, /^import \{ createAuthClient \} from 'fastify-password-auth\/client'$/m, 'imported by the package\'s name')
  const host = await clientHost(t, { prefix: '/api/Auth' }, {
    pages: { '/readme': page },
    routes: (app) => { app.get('/api/me', { onRequest: authenticate }, async (request) => request.account) }
  })
  const browser = await launch(t)
  const tab = await (await context(t, browser)).newPage()
  const sent: string[] = []
  tab.on('request', (request) => { if (request.url().includes('/api/')) sent.push(new URL(request.url()).pathname) })
  await tab.goto(`${host.url}/readme`)
  await tab.waitForFunction('document.title === "ready"', { timeout: 30_000 })
  t.match(await tab.evaluate(() => { const { signedIn, result, me } = (globalThis as any).readme; return { signedIn, result, me } }),
    { signedIn: false, result: { mfaRequired: false }, me: { status: 200, email: 'ada@example.com' } })
  t.same(sent, ['/api/Auth/Refresh', '/api/Auth/Login', '/api/me'], 'one Refresh at load (no session yet), the Login, the route')
  await tab.evaluate(async () => { await (globalThis as any).readme.auth.logout() })
  t.same(await tab.evaluate(() => (globalThis as any).shown), ['sign-in'], 'onSessionEnded showed the sign-in')
})
