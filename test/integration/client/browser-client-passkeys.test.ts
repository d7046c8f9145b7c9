import { existsSync } from 'node:fs'
import type { CDPSession, Page } from 'puppeteer-core'
import t from 'tap'
import { PASSWORD } from '../../helpers/app.js'
import { CHROMIUM, clientHost, context, launch, openHostPage } from '../../helpers/client-host.js'
import { totpCode } from '../../helpers/mfa.js'

// The client's passkey and second-factor calls in Chromium, with the DevTools virtual authenticator: add a
// passkey, step up with it, sign in with it, and finish a Login's second step with a recovery code or the passkey.
// @simplewebauthn/browser is loaded (through the page's import map) only when the first passkey call is made.
const missing = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
if (missing !== false && process.env.CI !== undefined) throw new Error(`CI: ${missing}`)

const browser = missing === false ? await launch(t) : undefined

async function authenticator (page: Page): Promise<{ cdp: CDPSession, authenticatorId: string }> {
  const cdp = await page.createCDPSession()
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true }
  })
  return { cdp, authenticatorId }
}

/** Runs `call` (a body of `async (auth) => …`) in the page; resolves its value, or `{ error: code }`. */
async function run (page: Page, call: string): Promise<any> {
  return await page.evaluate(`(${call})(globalThis.auth).catch((err) => ({ error: err.code ?? err.name }))`)
}

t.test('passkeys and the second factor through the client: add, step up, sign in; LoginMfa with a recovery code and with the passkey', { skip: missing }, async (t) => {
  const host = await clientHost(t, (url) => ({
    sessionRoutes: true,
    mfa: { issuer: 'Client Test' },
    deliver: () => {},
    passkeys: { rpId: 'localhost', rpName: 'Client Test', origins: [url] }
  }))
  const page = await openHostPage(await context(t, browser!), `${host.url}/`)
  const loaded: string[] = []
  page.on('request', (request) => { if (request.url().includes('/vendor/simplewebauthn/')) loaded.push(request.url()) })
  const { cdp, authenticatorId } = await authenticator(page)

  t.same(await run(page, "async (auth) => await auth.login({ email: 'ada@example.com', password: 'correct horse battery staple' })"), { mfaRequired: false })
  t.same(loaded, [], 'no passkey call yet: @simplewebauthn/browser not loaded')
  const added = await run(page, `async (auth) => await auth.passkeys.add({ password: ${JSON.stringify(PASSWORD)}, name: 'Laptop' })`)
  t.match(added, { name: 'Laptop', lastUsedAt: null })
  t.ok(loaded.length > 0, 'loaded on the first passkey call')
  t.equal((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length, 1)

  host.seen.clear()
  t.equal(await run(page, 'async (auth) => await auth.reauthenticateWithPasskey()'), undefined, 'step-up with the passkey')
  t.equal(host.seen.get('/Auth/Reauthenticate'), 1)
  t.match(await run(page, 'async (auth) => await auth.sessions.endOthers()'), { ended: 0 }, 'a route that needs a recent authentication')

  await run(page, 'async (auth) => await auth.logout()')
  t.equal(await run(page, 'async (auth) => await auth.signedIn()'), false)
  t.equal(await run(page, 'async (auth) => await auth.loginWithPasskey()'), undefined, 'signed in with the passkey')
  t.match(await run(page, 'async (auth) => await auth.passkeys.list()'), [{ name: 'Laptop', lastUsedAt: String }])

  // Two factors on (a passkey session passed them), then a password Login needs its second step.
  const { secret } = await run(page, 'async (auth) => await auth.mfa.setup()')
  const { recoveryCodes } = await run(page, `async (auth) => await auth.mfa.confirm({ code: ${JSON.stringify(totpCode(secret))}, password: ${JSON.stringify(PASSWORD)} })`)
  t.equal(recoveryCodes.length, 10)
  await run(page, 'async (auth) => await auth.logout()')
  const challenge = await run(page, `async (auth) => await auth.login({ email: 'ada@example.com', password: ${JSON.stringify(PASSWORD)} })`)
  t.match(challenge, { mfaRequired: true, mfaToken: String })
  t.equal(await run(page, 'async (auth) => await auth.signedIn()'), false, 'no session before the second step')
  t.same(await run(page, `async (auth) => await auth.loginMfa({ mfaToken: ${JSON.stringify(challenge.mfaToken)}, code: 'not a code' })`), { error: 'FST_PWAUTH_MFA_CODE_INVALID' })
  t.equal(await run(page, `async (auth) => await auth.loginMfa({ mfaToken: ${JSON.stringify(challenge.mfaToken)}, code: ${JSON.stringify(recoveryCodes[0])} })`), undefined)
  t.match(await run(page, 'async (auth) => await auth.mfa.status()'), { enabled: true, recoveryCodesLeft: 9 })

  await run(page, 'async (auth) => await auth.logout()')
  const again = await run(page, `async (auth) => await auth.login({ email: 'ada@example.com', password: ${JSON.stringify(PASSWORD)} })`)
  t.equal(await run(page, `async (auth) => await auth.loginMfaWithPasskey({ mfaToken: ${JSON.stringify(again.mfaToken)} })`), undefined, 'the second step with the passkey')
  t.equal((await run(page, 'async (auth) => await (await auth.fetch("/me")).json()')).email, 'ada@example.com')
})
