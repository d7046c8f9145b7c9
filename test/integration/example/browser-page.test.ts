import { existsSync } from 'node:fs'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import t, { type Test } from 'tap'
import { post, startServer } from '../../helpers/server-process.js'

// The demo page as a new user meets it (issue 37): a signed-out load that logs no failed request, forms that
// say how long a password must be, messages that do not linger into the next view, no buttons for what
// cannot apply, and the account's data to download.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const missing = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
if (missing !== false && process.env.CI !== undefined) throw new Error(`CI: ${missing}`)

const SECRET = `browser-page-secret-${'q'.repeat(32)}`

async function launch (t: Test): Promise<Browser> {
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'], protocolTimeout: 30_000 })
  t.teardown(async () => { await browser.close() })
  return browser
}

async function shows (page: Page, selector: string): Promise<void> {
  await page.bringToFront()
  try {
    await page.waitForSelector(selector, { timeout: 10_000 })
  } catch (err) {
    const message = await page.$eval('#message', (node) => node.textContent).catch(() => '?')
    throw new Error(`no ${selector} (message: "${message}") at ${page.url()}`, { cause: err })
  }
}

const text = async (page: Page, selector: string): Promise<string> => await page.$eval(selector, (node) => node.textContent ?? '')
const hidden = async (page: Page, selector: string): Promise<boolean> => await page.$eval(selector, (node) => (node as unknown as { hidden: boolean }).hidden)

async function signIn (page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(url)
  await shows(page, '#login:not([hidden])')
  await page.type('#login [name=email]', email)
  await page.type('#login [name=password]', password)
  await page.click('#login button[type=submit]')
  await shows(page, '#account:not([hidden])')
}

/** Every failed request and console error of the page from now on. */
function problems (page: Page): string[] {
  const seen: string[] = []
  page.on('response', (response) => { if (response.status() >= 400) seen.push(`${response.status()} ${response.url()}`) })
  page.on('requestfailed', (request) => { seen.push(`failed ${request.url()}`) })
  page.on('console', (message) => { if (message.type() === 'error') seen.push(`console: ${message.text()}`) })
  return seen
}

t.test('a signed-out load shows the sign-in form without a failed request or a console error; so does a load after signing out', { skip: missing }, async (t) => {
  const server = await startServer(t, { JWT_SECRET: SECRET })
  const [, email, password] = /Demo account: (\S+) \/ (\S+)/.exec(server.output())!
  const browser = await launch(t)
  const page = await browser.newPage()
  const seen = problems(page)
  await page.goto(`${server.url}/`)
  await shows(page, '#login:not([hidden])')
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.same(seen, [], 'nothing failed: no Refresh is sent without a session to refresh')

  await signIn(page, `${server.url}/`, email!, password!)
  await page.reload()
  await shows(page, '#account:not([hidden])')
  t.pass('a reload while signed in still refreshes')
  await page.click('#logout')
  await shows(page, '#login:not([hidden])')
  seen.length = 0
  await page.reload()
  await shows(page, '#login:not([hidden])')
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.same(seen, [], 'after signing out, a reload sends nothing bound to fail either')
})

t.test('the forms that choose a password say how long it must be', { skip: missing }, async (t) => {
  const server = await startServer(t, { JWT_SECRET: SECRET })
  const browser = await launch(t)
  const page = await browser.newPage()
  await page.goto(`${server.url}/`)
  await shows(page, '#login:not([hidden])')
  await page.click('#register-link')
  await shows(page, '#register:not([hidden])')
  for (const form of ['#register', '#reset', '#email-revert']) t.match(await text(page, form), /at least 15 characters/i, `${form} states the minimum`)
})

t.test('the account view offers only what can apply, downloads the account\'s data, and clears a message when the next action changes the view', { skip: missing }, async (t) => {
  const server = await startServer(t, { JWT_SECRET: SECRET, AUTH_REAUTH_MAX_AGE: '2' })
  const [, email, password] = /Demo account: (\S+) \/ (\S+)/.exec(server.output())!
  const browser = await launch(t)
  const page = await browser.newPage()
  await signIn(page, `${server.url}/`, email!, password!)
  await page.waitForFunction('document.querySelectorAll("#sessions li").length === 1', { timeout: 10_000 })
  t.equal(await hidden(page, '#end-others'), true, 'one session: no "sign out everywhere else"')
  t.equal(await hidden(page, '#passkey-stepup'), true, 'no passkey: no "confirm with a passkey"')
  t.equal(await hidden(page, '#mfa-off'), true, 'two factors off: no "turn it off"')

  await page.click('#export-account')
  // The sign-in counts as recent for 2 s (AUTH_REAUTH_MAX_AGE, for the prompt below): on a busy machine more may have
  // passed by now, and the export asks for the password first. Either way it must end in the export.
  await shows(page, '#export:not([hidden]), #reauth:not([hidden])')
  if (!await hidden(page, '#reauth')) {
    await page.type('#reauth [name=password]', password!)
    await page.click('#reauth button[type=submit]')
  }
  await shows(page, '#export:not([hidden])')
  const exported = JSON.parse(await text(page, '#export-json')) as { account: { email: string }, sessions: unknown[] }
  t.equal(exported.account.email, email, 'the export shows the account')
  t.equal(exported.sessions.length, 1)
  t.match(await page.$eval('#export-download', (node) => node.getAttribute('href')), /^blob:/, 'and offers it as a file')
  await page.click('#export-done')
  await shows(page, '#account:not([hidden])')

  // Another session, then a wrong password at the prompt of "sign out everywhere else": its message is for that action only,
  // not for the prompt of the next one.
  t.equal((await post(`${server.url}/app/Auth/Login`, { email, password })).status, 200)
  await page.click('#reload-me')
  await page.waitForFunction('document.querySelectorAll("#sessions li").length === 2', { timeout: 10_000 })
  t.equal(await hidden(page, '#end-others'), false, 'two sessions: "sign out everywhere else" is offered')
  await new Promise((resolve) => setTimeout(resolve, 2500)) // the sign-in is no longer recent
  await page.click('#end-others')
  await shows(page, '#reauth:not([hidden])')
  await page.type('#reauth [name=password]', 'not the password at all')
  await page.click('#reauth button[type=submit]')
  await shows(page, '#account:not([hidden])')
  await page.waitForFunction('document.getElementById("message").textContent.includes("did not work")', { timeout: 10_000 })
  await page.waitForNetworkIdle({ idleTime: 500, timeout: 10_000 }) // the account view has reloaded its lists
  await page.click('#sessions li button')
  await shows(page, '#reauth:not([hidden])')
  t.equal(await text(page, '#message'), '', 'the prompt opens without the last action\'s message')
})
