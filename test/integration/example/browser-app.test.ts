import { existsSync } from 'node:fs'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import t, { type Test } from 'tap'
import { buildApp } from '../../../example/app.js'
import { hashPassword, MemoryAccountStore } from '../../../lib/index.js'
import { PLUGIN_TIMEOUT_MS } from '../../helpers/app.js'
import { outboxMessage } from '../../helpers/outbox.js'
import { startServer } from '../../helpers/server-process.js'

// The demo's browser app (example/public) in headless Chromium: Debian's `chromium` package, driven by
// puppeteer-core, which downloads nothing. .ci/run installs it; elsewhere the test says why it skips.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const missing = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
if (missing !== false && process.env.CI !== undefined) throw new Error(`CI: ${missing}`)

const SECRET = `browser-test-secret-${'z'.repeat(32)}`

async function launch (t: Test): Promise<Browser> {
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'], protocolTimeout: 30_000 })
  t.teardown(async () => { await browser.close() })
  return browser
}

/** Waits until the app shows `view` (login, account). */
async function shows (page: Page, view: 'login' | 'account'): Promise<void> {
  // A background tab gets no animation frames, which puppeteer's polling waits for.
  await page.bringToFront()
  try {
    await page.waitForSelector(`#${view}:not([hidden])`, { timeout: 10_000 })
  } catch (err) {
    const message = await page.$eval('#message', (node) => node.textContent).catch(() => '?')
    throw new Error(`the app did not show ${view} (message: "${message}") at ${page.url()}`, { cause: err })
  }
}

async function signIn (page: Page, url: string, email: string, password: string): Promise<void> {
  await page.bringToFront()
  await page.goto(url)
  await shows(page, 'login')
  await page.type('#login [name=email]', email)
  await page.type('#login [name=password]', password)
  await page.click('#login button[type=submit]')
  await shows(page, 'account')
}

t.test('the demo browser app in cookie mode: sign in, reload, two tabs, sign out everywhere, an expired token, other sessions', { skip: missing }, async (t) => {
  const server = await startServer(t, { JWT_SECRET: SECRET, AUTH_TOKEN_TTL: '2' })
  const [, email, password] = /Demo account: (\S+) \/ (\S+)/.exec(server.output())!
  const browser = await launch(t)
  const page = await browser.newPage()
  await signIn(page, `${server.url}/`, email!, password!)
  t.equal(await page.$eval('#email', (node) => node.textContent), email, 'signed in, /me answered')
  await page.screenshot({ path: '.scratch/browser-app.png' }).catch(() => {})

  await page.reload()
  await shows(page, 'account')
  t.pass('a reload keeps the session: Refresh at page load finds the cookie')

  const second = await browser.newPage()
  await second.goto(`${server.url}/`)
  await shows(second, 'account')
  await Promise.all([page.reload(), second.reload()])
  // One after the other: shows() brings its page to the front, and a page left behind gets no animation frames,
  // so a wait on it would stall (this failed whenever the first page was not yet showing its account).
  await shows(page, 'account')
  await shows(second, 'account')
  t.pass('two tabs refreshing at once both stay signed in (the grace answer)')

  await page.bringToFront()
  await page.click('#logout')
  await shows(page, 'login')
  await second.bringToFront()
  await second.click('#reload-me')
  await shows(second, 'login')
  t.pass('signing out in one tab signs the other out')

  await signIn(page, `${server.url}/`, email!, password!)
  await new Promise((resolve) => setTimeout(resolve, 3000)) // the 2-second access token has expired
  await page.bringToFront()
  await page.click('#logout')
  await shows(page, 'login')
  await page.reload()
  await shows(page, 'login')
  t.pass('signing out with an expired access token ends the session: a reload stays signed out')

  const other = await browser.createBrowserContext()
  t.teardown(async () => { await other.close() })
  const elsewhere = await other.newPage()
  await signIn(elsewhere, `${server.url}/`, email!, password!)
  await signIn(page, `${server.url}/`, email!, password!)
  await page.bringToFront()
  await page.waitForFunction('document.querySelectorAll("#sessions li").length === 2', { timeout: 10_000 })
  const listed = await page.$$eval('#sessions li span', (items) => items.map((item) => item.textContent!))
  t.match(listed, [/^Chrome on Linux since /, /^Chrome on Linux \(this browser\) since /], 'sessions are named by browser and system (issue 29: no raw User-Agents)')
  t.notOk(listed.join(' ').includes('Mozilla/5.0'))
  await page.click('#sessions li button')
  await page.waitForFunction('document.querySelectorAll("#sessions li").length === 1', { timeout: 10_000 })
  await elsewhere.reload()
  await shows(elsewhere, 'login')
  t.pass('the session list ends another browser\'s session')
})

t.test('the whole app under a host prefix: the cookie path follows, so reloads and refreshes work', { skip: missing }, async (t) => {
  const accounts = new MemoryAccountStore()
  accounts.add({ email: 'ada@example.com', passwordHash: await hashPassword('correct horse battery staple', { memoryCost: 1024, timeCost: 1, parallelism: 1 }) })
  const app = await buildApp({ auth: { accounts, jwt: { secret: SECRET }, rateLimit: false }, prefix: '/portal', server: { pluginTimeout: PLUGIN_TIMEOUT_MS } })
  t.teardown(async () => { await app.close() })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const browser = await launch(t)
  const page = await browser.newPage()
  await page.goto(`${address}/portal`)
  t.equal(new URL(page.url()).pathname, '/portal/', 'redirected to the page with its trailing slash')
  await signIn(page, `${address}/portal/`, 'ada@example.com', 'correct horse battery staple')
  const cookies = await browser.cookies()
  t.match(cookies.find((cookie) => cookie.name.endsWith('refresh')), { path: '/portal/app/Auth', httpOnly: true, secure: true, sameSite: 'Strict' })
  await page.reload()
  await shows(page, 'account')
  t.pass('a reload under the prefix keeps the session')
})

t.test('forgotten password in the browser: ask for a link, open it (token in the fragment), set a new password, sign in', { skip: missing }, async (t) => {
  const { mkdtemp } = await import('node:fs/promises')
  const { join } = await import('node:path')
  const { tmpdir } = await import('node:os')
  const outbox = join(await mkdtemp(join(tmpdir(), 'browser-reset-')), 'outbox.jsonl')
  const server = await startServer(t, { JWT_SECRET: SECRET, AUTH_MAIL_OUTBOX: outbox })
  const [, email] = /Demo account: (\S+) \/ (\S+)/.exec(server.output())!
  const browser = await launch(t)
  const page = await browser.newPage()
  await page.goto(`${server.url}/`)
  await shows(page, 'login')
  await page.type('#login [name=email]', email!)
  await page.click('#forgot-link')
  await page.waitForSelector('#forgot:not([hidden])')
  t.equal(await page.$eval('#forgot [name=email]', (node) => (node as unknown as { value: string }).value), email, 'the address carried over')
  await page.click('#forgot button[type=submit]')
  await shows(page, 'login')
  t.match(await page.$eval('#message', (node) => node.textContent), /a link to reset its password is on its way/)

  const { token } = await outboxMessage(outbox, 'password_reset')
  await page.goto(`${server.url}/#token=${token!}`)
  await page.waitForSelector('#reset:not([hidden])')
  await page.type('#reset [name=newPassword]', 'short')
  await page.type('#reset [name=confirmNewPassword]', 'short')
  await page.click('#reset button[type=submit]')
  await page.waitForFunction('document.getElementById("message").textContent.includes("Choose another password")')
  t.pass('a weak password is refused, and the link still works')
  const fresh = 'a browser reset passphrase'
  for (const field of ['newPassword', 'confirmNewPassword']) {
    await page.$eval(`#reset [name=${field}]`, (node) => { (node as unknown as { value: string }).value = '' })
    await page.type(`#reset [name=${field}]`, fresh)
  }
  await page.screenshot({ path: '.scratch/browser-reset.png' }).catch(() => {})
  await page.click('#reset button[type=submit]')
  await shows(page, 'login')
  t.match(await page.$eval('#message', (node) => node.textContent), /sign in with the new one/)
  t.equal(new URL(page.url()).hash, '', 'the token left the address bar')
  await signIn(page, `${server.url}/`, email!, fresh)
  t.pass('signed in with the new password')
})

t.test('registration in the browser: create an account, open the link (token in the fragment), confirm, sign in', { skip: missing }, async (t) => {
  const { mkdtemp } = await import('node:fs/promises')
  const { join } = await import('node:path')
  const { tmpdir } = await import('node:os')
  const outbox = join(await mkdtemp(join(tmpdir(), 'browser-register-')), 'outbox.jsonl')
  const server = await startServer(t, { JWT_SECRET: SECRET, AUTH_MAIL_OUTBOX: outbox })
  const browser = await launch(t)
  const page = await browser.newPage()
  await page.goto(`${server.url}/`)
  await shows(page, 'login')
  await page.click('#register-link')
  await page.waitForSelector('#register:not([hidden])')
  const email = 'newcomer@example.com'
  const password = 'a passphrase picked at sign-up'
  await page.type('#register [name=email]', email)
  await page.type('#register [name=password]', password)
  await page.type('#register [name=confirmPassword]', password)
  await page.screenshot({ path: '.scratch/browser-register.png' }).catch(() => {})
  await page.click('#register button[type=submit]')
  await shows(page, 'login')
  t.match(await page.$eval('#message', (node) => node.textContent), /a link to confirm your address is on its way/)

  const { token } = await outboxMessage(outbox, 'verify_email')
  await page.goto('about:blank')
  await page.goto(`${server.url}/#verify=${token!}`)
  await page.waitForSelector('#verify:not([hidden])')
  await page.type('#verify [name=password]', 'too short')
  await page.click('#verify button[type=submit]')
  await page.waitForFunction('document.getElementById("message").textContent.includes("Choose another password (too short)")')
  t.pass('a weak password is refused, and the link still works')
  await page.$eval('#verify [name=password]', (node) => { (node as unknown as { value: string }).value = '' })
  await page.type('#verify [name=password]', password)
  await page.screenshot({ path: '.scratch/browser-verify.png' }).catch(() => {})
  await page.click('#verify button[type=submit]')
  await shows(page, 'login')
  t.match(await page.$eval('#message', (node) => node.textContent), /your account exists/)
  t.equal(new URL(page.url()).hash, '', 'the token left the address bar')
  await signIn(page, `${server.url}/`, email, password)
  t.pass('signed in with the new account')
})

t.test('two-step sign-in in the browser: a QR code, a code to turn it on, recovery codes once, a code at sign-in, off again', { skip: missing }, async (t) => {
  const { generateSync } = await import('otplib')
  const { mkdtemp } = await import('node:fs/promises')
  const { join } = await import('node:path')
  const { tmpdir } = await import('node:os')
  const outbox = join(await mkdtemp(join(tmpdir(), 'browser-mfa-')), 'outbox.jsonl')
  // Every screen on a session older than reauthMaxAge: the password in Confirm and Disable stands for it.
  const server = await startServer(t, { JWT_SECRET: SECRET, AUTH_MAIL_OUTBOX: outbox, AUTH_APP_NAME: 'Demo App', AUTH_REAUTH_MAX_AGE: '1' })
  const [, email, password] = /Demo account: (\S+) \/ (\S+)/.exec(server.output())!
  const browser = await launch(t)
  const page = await browser.newPage()
  const sent: string[] = []
  page.on('request', (request) => { sent.push(new URL(request.url()).pathname) })
  await signIn(page, `${server.url}/`, email!, password!)
  t.match(await page.$eval('#mfa-status', (node) => node.textContent), /^Off/)
  await new Promise((resolve) => setTimeout(resolve, 1100))
  await page.click('#mfa-on')
  await page.waitForSelector('#mfa-setup:not([hidden])')
  await page.waitForFunction('document.getElementById("qr").complete && document.getElementById("qr").naturalWidth > 100', { timeout: 10_000 })
  t.match(await page.$eval('#qr', (node) => (node as unknown as { src: string }).src), /^data:image\/png;base64,/, 'the set-up is a QR code image')
  t.notOk((await page.$eval('#mfa-setup', (node) => (node as unknown as { innerText: string }).innerText)).includes('otpauth://'), 'not the raw URI')
  await page.screenshot({ path: '.scratch/browser-mfa-setup.png', fullPage: true }).catch(() => {})

  // The authenticator app: the codes come from the key the page offers to type by hand.
  const secret = await page.$eval('#mfa-secret', (node) => node.textContent!)
  const step = Math.floor(Date.now() / 30_000)
  const code = (at: number) => generateSync({ secret, epoch: at * 30 })
  await page.type('#mfa-confirm [name=code]', code(step))
  await page.type('#mfa-confirm [name=password]', password!)
  await page.click('#mfa-confirm button[type=submit]')
  await page.waitForSelector('#recovery:not([hidden])')
  const recoveryCodes = await page.$$eval('#recovery-codes li', (items) => items.map((item) => item.textContent!))
  t.equal(recoveryCodes.length, 10, 'ten recovery codes, shown once')
  await page.screenshot({ path: '.scratch/browser-mfa-recovery.png' }).catch(() => {})
  await page.click('#recovery-done')
  await shows(page, 'account')
  t.equal(await page.$$eval('#recovery-codes li', (items) => items.length), 0, 'gone from the page')
  t.match(await page.$eval('#mfa-status', (node) => node.textContent), /^On: .* 10 recovery code/)
  t.match(await outboxMessage(outbox, 'mfa_enabled'), { to: email })

  const signInWithPassword = async () => {
    await page.click('#logout')
    await shows(page, 'login')
    await page.type('#login [name=email]', email!)
    await page.type('#login [name=password]', password!)
    await page.click('#login button[type=submit]')
  }
  const signInWithCode = async (typed: string, { remember = false } = {}) => {
    await signInWithPassword()
    await page.waitForSelector('#code:not([hidden])')
    t.equal(await page.$eval('#remember-label', (node) => (node as unknown as { hidden: boolean }).hidden), false, 'the code step offers to remember the device')
    await page.type('#code [name=code]', typed)
    if (remember) await page.click('#code [name=remember]')
    await page.click('#code button[type=submit]')
    await shows(page, 'account')
  }
  await signInWithCode(code(step + 1))
  t.pass('signed in with the password and a TOTP code')
  t.equal(await page.$eval('#trusted', (node) => (node as unknown as { hidden: boolean }).hidden), true, 'no device remembered yet')
  await page.screenshot({ path: '.scratch/browser-mfa-signed-in.png' }).catch(() => {})
  await signInWithCode(recoveryCodes[0]!, { remember: true })
  t.match(await page.$eval('#mfa-status', (node) => node.textContent), /9 recovery code/, 'a recovery code signs in once')
  t.match(await page.$$eval('#trusted-devices li span', (items) => items.map((item) => item.textContent!)), [/^Chrome on Linux until /], 'this browser is remembered')

  await signInWithPassword()
  await shows(page, 'account')
  t.pass('the remembered browser signs in with the password alone (mfa.trustDays, AUTH_MFA_TRUST_DAYS)')
  t.match(await page.$$eval('#sessions li span', (items) => items.map((item) => item.textContent!)).then((items) => items.at(-1)),
    /^Chrome on Linux \(this browser\), signed in without a code \(trusted device\) since /)
  t.match(await outboxMessage(outbox, 'new_device_login'), { to: email, device: 'Chrome on Linux', ip: '127.0.0.1' }, 'the first sign-in from this browser was told of')

  await new Promise((resolve) => setTimeout(resolve, 1100))
  await page.click('#mfa-off')
  await page.waitForSelector('#mfa-disable:not([hidden])')
  t.notOk(sent.some((path) => path.endsWith('/Reauthenticate')), 'Setup, Confirm and the sign-ins asked for no Reauthenticate, though the session is old')
  sent.length = 0
  await page.type('#mfa-disable [name=code]', '000000')
  await page.type('#mfa-disable [name=password]', password!)
  await page.click('#mfa-disable button[type=submit]')
  await page.waitForFunction('document.getElementById("message").textContent.includes("That code did not work")')
  t.same(sent.filter((path) => path.endsWith('/Mfa/Disable')), ['/app/Auth/Mfa/Disable'], 'a wrong code is sent once, not retried after a Refresh')
  t.match(await outboxMessage(outbox, 'mfa_code_failed'), { to: email }, 'the owner hears of a wrong code after the right password')
  await page.$eval('#mfa-disable [name=code]', (node) => { (node as unknown as { value: string }).value = '' })
  await page.type('#mfa-disable [name=code]', recoveryCodes[1]!)
  await page.screenshot({ path: '.scratch/browser-mfa-disable.png' }).catch(() => {})
  await page.click('#mfa-disable button[type=submit]')
  await page.waitForFunction('document.getElementById("mfa-status").textContent.startsWith("Off")', { timeout: 10_000 })
  t.notOk(sent.some((path) => path.endsWith('/Reauthenticate')), 'no Reauthenticate on the way, though the session is old')
  t.match(await outboxMessage(outbox, 'mfa_disabled'), { to: email })
  await page.click('#logout')
  await signIn(page, `${server.url}/`, email!, password!)
  t.pass('off: the password alone signs in again')
})

t.test('a breached password in the browser: the page says why it cannot sign in, and a reset link is on its way', { skip: missing }, async (t) => {
  const { mkdtemp } = await import('node:fs/promises')
  const { join } = await import('node:path')
  const { tmpdir } = await import('node:os')
  const { startRangeServer } = await import('../../helpers/range-server.js')
  const range = await startRangeServer(t)
  const outbox = join(await mkdtemp(join(tmpdir(), 'browser-breach-')), 'outbox.jsonl')
  const server = await startServer(t, { JWT_SECRET: SECRET, AUTH_MAIL_OUTBOX: outbox, AUTH_PWNED_RANGE_URL: range.url, AUTH_PWNED_TIMEOUT_MS: '1000' })
  const [, email, password] = /Demo account: (\S+) \/ (\S+)/.exec(server.output())!
  range.breach(password!)
  const browser = await launch(t)
  const page = await browser.newPage()
  await page.goto(`${server.url}/`)
  await shows(page, 'login')
  await page.type('#login [name=email]', email!)
  await page.type('#login [name=password]', password!)
  await page.click('#login button[type=submit]')
  await page.waitForFunction('document.getElementById("message").textContent.includes("appeared in a data breach")')
  t.pass('the page shows the forced-reset answer')
  t.notOk(await page.$eval('#login', (node) => (node as unknown as { hidden: boolean }).hidden), 'still signed out')
  await page.screenshot({ path: '.scratch/browser-breach.png' }).catch(() => {})
  t.match(await outboxMessage(outbox, 'password_reset', email), { to: email, token: String })
  t.ok(range.requests.length >= 1 && range.requests.every(({ path }) => /^[0-9A-F]{5}$/.test(path)), 'only prefixes reached the range service')
})

t.test('account self-service in the browser: change the address (link from the outbox), take it back, then delete the account', { skip: missing }, async (t) => {
  const { mkdtemp } = await import('node:fs/promises')
  const { join } = await import('node:path')
  const { tmpdir } = await import('node:os')
  const outbox = join(await mkdtemp(join(tmpdir(), 'browser-account-')), 'outbox.jsonl')
  const server = await startServer(t, { JWT_SECRET: SECRET, AUTH_MAIL_OUTBOX: outbox })
  const [, email, password] = /Demo account: (\S+) \/ (\S+)/.exec(server.output())!
  const newEmail = 'moved@example.net'
  const browser = await launch(t)
  const page = await browser.newPage()
  await signIn(page, `${server.url}/`, email!, password!)

  await page.click('#email-change')
  await page.waitForSelector('#change-email:not([hidden])')
  await page.type('#change-email [name=newEmail]', newEmail)
  await page.type('#change-email [name=password]', 'not the password')
  await page.click('#change-email button[type=submit]')
  await page.waitForFunction('document.getElementById("message").textContent.includes("That password did not work")')
  t.pass('the change takes the password')
  await page.$eval('#change-email [name=password]', (node) => { (node as unknown as { value: string }).value = '' })
  await page.type('#change-email [name=password]', password!)
  await page.click('#change-email button[type=submit]')
  await page.waitForFunction('document.getElementById("message").textContent.includes("Check the new mailbox")')
  t.equal(await page.$eval('#email', (node) => node.textContent), email, 'nothing changed yet')
  const { token } = await outboxMessage(outbox, 'email_change', newEmail)
  await page.goto(`${server.url}/#email-change=${token!}`)
  await page.waitForSelector('#email-change-confirm:not([hidden])')
  await page.click('#email-change-confirm button[type=submit]')
  await shows(page, 'account')
  t.equal(await page.$eval('#email', (node) => node.textContent), newEmail, 'the account has its new address, and this browser stays signed in')
  t.equal(new URL(page.url()).hash, '', 'the token left the address bar')

  const revert = (await outboxMessage(outbox, 'email_changed', email)).token!
  const fresh = 'taken back in the browser'
  await page.goto(`${server.url}/#email-revert=${revert}`)
  await page.waitForSelector('#email-revert:not([hidden])')
  await page.type('#email-revert [name=newPassword]', fresh)
  await page.type('#email-revert [name=confirmNewPassword]', fresh)
  await page.click('#email-revert button[type=submit]')
  await shows(page, 'login')
  t.match(await page.$eval('#message', (node) => node.textContent), /yours again/)
  await signIn(page, `${server.url}/`, email!, fresh)
  t.equal(await page.$eval('#email', (node) => node.textContent), email, 'the old address and the new password')

  await page.click('#delete-account')
  await page.waitForSelector('#delete:not([hidden])')
  await page.type('#delete [name=password]', fresh)
  await page.click('#delete button[type=submit]')
  await shows(page, 'login')
  t.match(await page.$eval('#message', (node) => node.textContent), /deleted/)
  t.ok(await outboxMessage(outbox, 'account_deleted', email), 'the address heard of it')
  t.ok(await outboxMessage(outbox, 'account_deleted', newEmail), 'and so did the one it left by the revert')
  await page.type('#login [name=email]', email!)
  await page.type('#login [name=password]', fresh)
  await page.click('#login button[type=submit]')
  await page.waitForFunction('document.getElementById("message").textContent.includes("Wrong e-mail or password")')
  t.pass('the account is gone: signing in fails')
})
