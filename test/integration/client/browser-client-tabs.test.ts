import { existsSync } from 'node:fs'
import type { Page } from 'puppeteer-core'
import t from 'tap'
import { EMAIL } from '../../helpers/app.js'
import { CHROMIUM, clientHost, context, launch, openHostPage } from '../../helpers/client-host.js'

// fastify-password-auth/client in Chromium, in a host page of its own (test/helpers/client-host.ts), with ten tabs
// whose access tokens live 2 s: one Refresh per expiry, a reused refresh token signs all ten out, and without Web
// Locks the grace answer keeps every tab signed in.
const missing = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
if (missing !== false && process.env.CI !== undefined) throw new Error(`CI: ${missing}`)

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
const TABS = 10
const browser = missing === false ? await launch(t) : undefined

/** GET /me through each tab's client, all at one moment (each tab waits for the same clock time); resolves the statuses. */
async function callTogether (pages: Page[]): Promise<number[]> {
  const at = Date.now() + 300
  return await Promise.all(pages.map(async (page) => await page.evaluate(async (at: number) => {
    await new Promise((resolve) => setTimeout(resolve, at - Date.now()))
    return (await (globalThis as any).auth.fetch('/me')).status as number
  }, at)))
}

const state = async (page: Page): Promise<{ signedIn: boolean, ended: string[] }> =>
  await page.evaluate(async () => ({ signedIn: await (globalThis as any).auth.signedIn() as boolean, ended: (globalThis as any).ended as string[] }))

t.test('cookie mode: a host page imports the client from the built package, logs in and calls its guarded route; ten tabs make one Refresh per expiry', { skip: missing }, async (t) => {
  const host = await clientHost(t)
  const tabs = await context(t, browser!)
  const first = await openHostPage(tabs, `${host.url}/`)
  t.equal(await first.evaluate(() => (globalThis as any).signedIn), false, 'signed out at first')
  t.same(await first.evaluate(async () => await (globalThis as any).auth.login({ email: 'ada@example.com', password: 'correct horse battery staple' })), { mfaRequired: false })
  t.equal(await first.evaluate(async () => await (await (globalThis as any).auth.fetch('/me')).json().then((account: { email: string }) => account.email)), EMAIL, 'the guarded host route')
  const scripts = await first.evaluate(() => [document.cookie, JSON.stringify(Object.keys(localStorage))])
  t.same(scripts, ['', '[]'], 'no script sees the refresh token: no readable cookie, nothing in localStorage')

  const pages = [first]
  for (let i = 1; i < TABS; i++) pages.push(await openHostPage(tabs, `${host.url}/`))
  for (const page of pages.slice(1)) t.equal(await page.evaluate(() => (globalThis as any).signedIn), true, 'a new tab is signed in')

  for (const round of [1, 2]) {
    await sleep(2_300) // every tab's access token has expired
    host.seen.clear()
    const statuses = await callTogether(pages)
    t.same(statuses, Array(TABS).fill(200), `round ${round}: all ten tabs go on`)
    t.equal(host.seen.get('/Auth/Refresh'), 1, `round ${round}: one Refresh for ten tabs`)
  }
  for (const page of pages) t.same((await state(page)).ended, [], 'nobody was signed out')

  host.seen.clear()
  await first.evaluate(async () => { await (globalThis as any).auth.logout() })
  t.equal(host.seen.get('/Auth/Logout'), 1)
  await sleep(200)
  for (const page of pages) t.same((await state(page)).ended, ['logout'], 'a logout in one tab signs every tab out')
  t.equal(host.seen.get('/Auth/Refresh'), undefined, 'and none of them asks the server again')
})

t.test('token mode: a reused refresh token signs all ten tabs out', { skip: missing }, async (t) => {
  // No grace: a replaced refresh token is a reused one at once.
  const host = await clientHost(t, { refresh: { grace: 0 } })
  const tabs = await context(t, browser!)
  const first = await openHostPage(tabs, `${host.url}/?mode=token`)
  const login = first.waitForResponse((response) => response.url().endsWith('/Auth/Login'))
  await first.evaluate(async () => await (globalThis as any).auth.login({ email: 'ada@example.com', password: 'correct horse battery staple' }))
  const { refreshToken: stolen } = await (await login).json() as { refreshToken: string }
  const pages = [first]
  for (let i = 1; i < TABS; i++) pages.push(await openHostPage(tabs, `${host.url}/?mode=token`))
  for (const page of pages.slice(1)) t.equal(await page.evaluate(() => (globalThis as any).signedIn), true, 'a new tab is signed in')

  await sleep(2_300)
  host.seen.clear()
  t.same(await callTogether(pages), Array(TABS).fill(200), 'with no grace at all, ten tabs still refresh as one')
  t.equal(host.seen.get('/Auth/Refresh'), 1)

  t.equal((await host.refresh(stolen)).statusCode, 401, 'the first refresh token, replaced, comes back: reuse, the session ends')
  host.seen.clear()
  t.equal(await pages[3]!.evaluate(async () => (await (globalThis as any).auth.fetch('/me')).status), 401)
  t.equal(host.seen.get('/Auth/Refresh'), 1, 'one Refresh learns it')
  await sleep(200)
  for (const page of pages) t.same((await state(page)).ended, ['refresh_refused'], 'every tab heard the session end')
  for (const page of pages) t.equal((await state(page)).signedIn, false)
  t.equal(host.seen.get('/Auth/Refresh'), 1, 'and none asks again')
})

t.test('without Web Locks: a lease in IndexedDB stands in, ten tabs make one Refresh and nobody is signed out', { skip: missing }, async (t) => {
  const host = await clientHost(t)
  const tabs = await context(t, browser!)
  const pages = [await openHostPage(tabs, `${host.url}/?nolocks`)]
  t.equal(await pages[0]!.evaluate(() => (globalThis as any).navigator.locks), undefined)
  await pages[0]!.evaluate(async () => await (globalThis as any).auth.login({ email: 'ada@example.com', password: 'correct horse battery staple' }))
  for (let i = 1; i < TABS; i++) pages.push(await openHostPage(tabs, `${host.url}/?nolocks`))
  await sleep(2_300)
  host.seen.clear()
  t.same(await callTogether(pages), Array(TABS).fill(200), 'all ten go on')
  t.equal(host.seen.get('/Auth/Refresh'), 1, 'one Refresh for ten tabs: they took turns, and the later ones found its token')
  for (const page of pages) t.same(await state(page), { signedIn: true, ended: [] }, 'nobody signed out')
})
