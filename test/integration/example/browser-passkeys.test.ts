import { existsSync } from 'node:fs'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import t, { type Test } from 'tap'
import { freePort } from '../../helpers/free-port.js'
import { startServer } from '../../helpers/server-process.js'

// The demo's passkeys in headless Chromium with the DevTools virtual authenticator (the WebAuthn domain).
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const missing = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
if (missing !== false && process.env.CI !== undefined) throw new Error(`CI: ${missing}`)

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

const message = async (page: Page, text: string): Promise<void> => {
  await page.waitForFunction((expected: string) => (globalThis as any).document.getElementById('message')?.textContent?.includes(expected), { timeout: 10_000 }, text)
}

/** A page in a browser context of its own, with a virtual platform authenticator holding resident keys. */
async function withAuthenticator (browser: Browser, isUserVerified: boolean) {
  const context = await browser.createBrowserContext()
  const page = await context.newPage()
  const cdp = await page.createCDPSession()
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified, automaticPresenceSimulation: true }
  })
  return { page, cdp, authenticatorId }
}

t.test('the demo\'s passkeys in Chromium: add after sign-in, step up, sign in with it, confirm with it from the re-authentication prompt; a UV-less assertion from another context is refused', { skip: missing }, async (t) => {
  const port = await freePort()
  // A sign-in counts as recent for 3 s: the generic prompt is reached by waiting that long.
  const server = await startServer(t, { PORT: String(port), JWT_SECRET: `browser-passkeys-${'y'.repeat(32)}`, AUTH_REAUTH_MAX_AGE: '3' })
  // The address the server prints, with the passkeys' defaults (AUTH_PASSKEY_RP_ID, AUTH_PASSKEY_ORIGINS): they work there.
  const origin = server.url
  t.equal(origin, `http://localhost:${port}`)
  t.notMatch(server.output(), /passkeys work on pages served from/, 'no warning: the page is on the default origin')
  const [, email, password] = /Demo account: (\S+) \/ (\S+)/.exec(server.output())!
  const browser = await launch(t)

  const a = await withAuthenticator(browser, true)
  await a.page.goto(`${origin}/`)
  await shows(a.page, '#login:not([hidden])')
  t.equal(await a.page.$eval('#login [name=email]', (node) => node.getAttribute('autocomplete')), 'username webauthn', 'the e-mail field offers passkeys (conditional UI)')
  await a.page.type('#login [name=email]', email!)
  await a.page.type('#login [name=password]', password!)
  await a.page.click('#login button[type=submit]')
  await shows(a.page, '#account:not([hidden])')

  // Adding a passkey asks for the password (it stands for a recent sign-in): a wrong one adds nothing.
  await a.page.click('#passkey-add')
  await shows(a.page, '#passkey-new:not([hidden])')
  await a.page.type('#passkey-new [name=password]', 'not the password at all')
  await a.page.click('#passkey-new button[type=submit]')
  await message(a.page, 'That password did not work.')
  t.equal((await a.cdp.send('WebAuthn.getCredentials', { authenticatorId: a.authenticatorId })).credentials.length, 1, 'the ceremony ran, the server refused it')
  await a.cdp.send('WebAuthn.clearCredentials', { authenticatorId: a.authenticatorId })
  await a.page.click('#passkey-add')
  await shows(a.page, '#passkey-new:not([hidden])')
  await a.page.type('#passkey-new [name=password]', password!)
  await a.page.click('#passkey-new button[type=submit]')
  await message(a.page, 'Your passkey is added.')
  await shows(a.page, '#passkeys li')
  const { credentials } = await a.cdp.send('WebAuthn.getCredentials', { authenticatorId: a.authenticatorId })
  t.equal(credentials.length, 1)
  t.equal(credentials[0]!.isResidentCredential, true, 'a discoverable credential')
  t.equal(credentials[0]!.rpId, 'localhost')

  await a.page.click('#passkey-stepup')
  await message(a.page, 'Confirmed')
  t.pass('a step-up with the passkey')

  // Signed out, the sign-in form asks for passkeys in the e-mail field's autofill (conditional UI): the
  // virtual authenticator, which simulates the user's touch, answers it at once.
  await a.page.click('#logout')
  await shows(a.page, '#account:not([hidden])')
  t.equal(await a.page.$eval('#email', (node) => node.textContent), email, 'signed in with the passkey from the autofill, no password')
  const sessions = await a.page.$$eval('#sessions li', (items) => items.length)
  t.equal(sessions, 1, 'the password session ended at sign-out; this one is the passkey\'s')

  // Once that sign-in is no longer recent, a guarded action's prompt offers the passkey beside the password (ending the
  // other sessions: ChangeEmail and DeleteAccount take the password itself).
  const passkeySignInAt = Date.now()
  // 'Sign out everywhere else' shows only with another session to end: one more, from a password sign-in elsewhere.
  const elsewhere = await fetch(`${origin}/Auth/Login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })
  t.equal(elsewhere.status, 200, 'a second session, signed in elsewhere')
  await a.page.reload()
  await shows(a.page, '#account:not([hidden]) #end-others:not([hidden])')
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, passkeySignInAt + 3500 - Date.now())))
  await a.page.click('#end-others')
  await shows(a.page, '#reauth:not([hidden]) #reauth-passkey:not([hidden])')
  t.match(await a.page.$eval('#reauth p', (node) => node.textContent), /password again, or one of your passkeys\./)
  await a.page.screenshot({ path: '.scratch/browser-reauth-passkey.png' }).catch(() => {})
  const sent: string[] = []
  a.page.on('request', (request) => { if (request.method() === 'POST') sent.push(new URL(request.url()).pathname) })
  await a.page.click('#reauth-passkey')
  await message(a.page, 'other session(s)')
  t.same(sent, ['/app/Auth/Passkeys/ReauthOptions', '/app/Auth/Reauthenticate', '/app/Auth/Sessions/EndOthers'], 'the passkey reauthenticated, then the action went through')

  // Another browser context, whose authenticator holds the same key but does not verify the user.
  const b = await withAuthenticator(browser, false)
  const credential = credentials[0]!
  await b.cdp.send('WebAuthn.addCredential', { authenticatorId: b.authenticatorId, credential: { ...credential, signCount: credential.signCount + 10 } })
  await b.page.goto(`${origin}/`)
  await shows(b.page, '#login:not([hidden])')
  // The page asks for user verification and would stop here; a script asking without it gets an assertion with UV off.
  const uvOff = await b.page.evaluate(async () => {
    const options = await (await fetch('app/Auth/Passkeys/LoginOptions', { method: 'POST' })).json() as Record<string, unknown>
    const response = await (globalThis as any).SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: { ...options, userVerification: 'discouraged' } })
    const flags = new Uint8Array(Uint8Array.from(atob(response.response.authenticatorData.replaceAll('-', '+').replaceAll('_', '/')), (c) => c.charCodeAt(0)))[32]!
    const answer = await fetch('app/Auth/LoginPasskey', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ response }) })
    return { status: answer.status, code: (await answer.json() as { code: string }).code, uv: (flags & 4) !== 0 }
  })
  t.same(uvOff, { status: 401, code: 'FST_PWAUTH_PASSKEY_INVALID', uv: false }, 'a UV-less assertion is refused')

  await b.cdp.send('WebAuthn.setUserVerified', { authenticatorId: b.authenticatorId, isUserVerified: true })
  // The button (or the autofill, which may answer first now that the user is verified).
  await b.page.evaluate(() => { (globalThis as any).document.getElementById('passkey-login')?.click() })
  await shows(b.page, '#account:not([hidden])')
  t.pass('with user verification, the second context signs in with the same passkey')
})
