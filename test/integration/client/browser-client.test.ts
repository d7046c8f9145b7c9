import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import t from 'tap'
import { CHROMIUM, clientHost, context, launch, openHostPage } from '../../helpers/client-host.js'
import { freePort } from '../../helpers/free-port.js'

// fastify-password-auth/client in Chromium, in a host page of its own (test/helpers/client-host.ts): a wrong
// password is one request and one 401, an unreachable or silent server a typed error in bounded time.
const missing = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
if (missing !== false && process.env.CI !== undefined) throw new Error(`CI: ${missing}`)

const browser = missing === false ? await launch(t) : undefined

t.test('a wrong password is one request and one 401; a wrong password at Reauthenticate too', { skip: missing }, async (t) => {
  const host = await clientHost(t, { sessionRoutes: true })
  const page = await openHostPage(await context(t, browser!), `${host.url}/`)
  const sent: string[] = []
  page.on('request', (request) => { sent.push(new URL(request.url()).pathname) })
  const wrong = await page.evaluate(async () => await (globalThis as any).auth.login({ email: 'ada@example.com', password: 'not the password' })
    .catch((err: any) => ({ name: err.name, isAuthError: err instanceof (globalThis as any).AuthError, code: err.code, status: err.status })))
  t.same(wrong, { name: 'AuthError', isAuthError: true, code: 'FST_PWAUTH_INVALID_CREDENTIALS', status: 401 })
  t.same(sent, ['/Auth/Login'], 'sent once, no Refresh')

  await page.evaluate(async () => await (globalThis as any).auth.login({ email: 'ada@example.com', password: 'correct horse battery staple' }))
  sent.length = 0
  host.seen.clear()
  const reauth = await page.evaluate(async () => await (globalThis as any).auth.reauthenticate({ password: 'not the password' }).catch((err: any) => err.code))
  t.equal(reauth, 'FST_PWAUTH_INVALID_CREDENTIALS')
  t.same(sent, ['/Auth/Reauthenticate'], 'sent once, no Refresh')
  t.equal(host.seen.get('/Auth/Refresh'), undefined)
  t.equal(await page.evaluate(async () => await (globalThis as any).auth.signedIn()), true, 'still signed in')
  t.match(await page.evaluate(async () => await (globalThis as any).auth.sessions.list()), [{ current: true }], 'a typed call of a guarded route')
  t.equal(await page.evaluate(async () => (await (globalThis as any).auth.fetch('/me')).status), 200, 'the host\'s guarded route')
})

t.test('a server that cannot be reached, or does not answer, is a typed error in bounded time', { skip: missing }, async (t) => {
  const host = await clientHost(t)
  const closed = await freePort()
  const silent = createServer(() => {}) // takes connections, never answers
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.close() })
  const silentPort = (silent.address() as { port: number }).port
  const page = await openHostPage(await context(t, browser!), `${host.url}/`)
  const outcome = await page.evaluate(async (closed: number, silent: number) => {
    const { createAuthClient } = await import('/client/index.js' as string)
    const attempt = async (baseUrl: string) => {
      const started = Date.now()
      const client = createAuthClient({ mode: 'cookie', baseUrl, timeout: 1_000, name: baseUrl })
      const error = await client.login({ email: 'ada@example.com', password: 'x' }).then(() => null, (err: any) => err)
      return { code: error?.code, status: error?.status, ms: Date.now() - started }
    }
    return [await attempt(`http://127.0.0.1:${closed}`), await attempt(`http://127.0.0.1:${silent}`)]
  }, closed, silentPort)
  t.match(outcome[0], { code: 'NETWORK_ERROR', status: 0 }, 'nothing listening')
  t.match(outcome[1], { code: 'TIMEOUT', status: 0 }, 'no answer')
  t.ok(outcome[1]!.ms < 5_000, `gave up after ${outcome[1]!.ms} ms (timeout 1000)`)
})
