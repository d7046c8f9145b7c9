// Passkeys in the demo (contract §18), with @simplewebauthn/browser (webauthn.js, a global): add one with the
// password (a stolen session alone adds none), list and remove them, sign in with one (also from the e-mail field's autofill), and confirm
// it is you with one (Reauthenticate on this session), from its own button or the re-authentication prompt.
const { startRegistration, startAuthentication, browserSupportsWebAuthn, browserSupportsWebAuthnAutofill } = globalThis.SimpleWebAuthnBrowser

/** `app`: what app.js shares: client, call, json, auth, say, show, showAccount, withRecentAuth, problemCode, failure, $. */
export function installPasskeys (app) {
  const { client, call, json, auth, say, show, showAccount, withRecentAuth, problemCode, failure, $ } = app
  const url = (path) => new URL(path, auth)

  /** A ceremony the user may cancel: null then, and a calm message (none for the autofill's, which is silent). */
  const ceremony = async (run, quiet = false) => {
    try {
      return await run()
    } catch (err) {
      // AbortError: another ceremony replaced this one (a click while the autofill waited): nothing to say.
      if (!quiet && err?.name !== 'AbortError') say(err?.name === 'NotAllowedError' ? 'The passkey request was cancelled.' : 'Passkeys did not work in this browser.')
      return null
    }
  }

  /** A sign-in with a passkey through the client: LoginOptions, the browser's ceremony, LoginPasskey. */
  async function signIn (useBrowserAutofill = false) {
    try {
      await client.loginWithPasskey({ useBrowserAutofill })
    } catch (err) {
      const refused = err?.code === 'FST_PWAUTH_PASSKEY_INVALID'
      if (err?.name === 'AuthError') {
        // The autofill's own failures (its options) are silent; a refused passkey is said either way.
        if (refused || !useBrowserAutofill) say(refused ? 'That passkey did not work.' : failure(err, 'That did not work: try again.'))
        return
      }
      // AbortError: another ceremony replaced this one (a click while the autofill waited): nothing to say.
      if (!useBrowserAutofill && err?.name !== 'AbortError') say(err?.name === 'NotAllowedError' ? 'The passkey request was cancelled.' : 'Passkeys did not work in this browser.')
      return
    }
    say('')
    await showAccount()
  }

  $('passkey-login').onclick = async () => { await signIn() }

  /** Offers the browser's passkeys in the e-mail field's autofill while the sign-in form is shown. */
  async function offerAutofill () {
    if (await browserSupportsWebAuthnAutofill()) await signIn(true)
  }

  let count = 0
  async function listPasskeys () {
    const response = await call(url('Passkeys'))
    const passkeys = response.ok ? await response.json() : []
    count = passkeys.length
    // Nothing to confirm with until the account has a passkey.
    $('passkey-stepup').hidden = !supported || count === 0
    $('passkeys').replaceChildren(...passkeys.map((passkey) => {
      const item = document.createElement('li')
      item.textContent = `${passkey.name}${passkey.backedUp ? ' (synced)' : ''} `
      const when = document.createElement('small')
      when.textContent = passkey.lastUsedAt === null ? 'never used' : `last used ${new Date(passkey.lastUsedAt).toLocaleString()}`
      item.append(when)
      const remove = document.createElement('button')
      remove.type = 'button'
      remove.className = 'secondary'
      remove.textContent = 'Remove'
      remove.onclick = async () => {
        const removed = await withRecentAuth(async () => await call(url(`Passkeys/${encodeURIComponent(passkey.id)}`), { method: 'DELETE' }))
        say(removed.ok ? 'The passkey is removed.' : 'That did not work.', removed.ok)
        await showAccount()
      }
      item.append(remove)
      return item
    }))
  }

  // The password stands for a recent sign-in: adding a passkey asks for it, and for no Reauthenticate.
  $('passkey-add').onclick = () => { say(''); show('passkey-new') }
  $('passkey-new-cancel').onclick = async () => { $('passkey-new').reset(); say(''); await showAccount() }
  $('passkey-new').onsubmit = async (event) => {
    event.preventDefault()
    const password = new FormData($('passkey-new')).get('password')
    $('passkey-new').reset()
    const options = await call(url('Passkeys/RegisterOptions'), json())
    if (!options.ok) {
      await showAccount()
      return say(await problemCode(options) === 'FST_PWAUTH_MFA_REQUIRED' ? 'Sign in with your code first.' : 'That did not work.')
    }
    const response = await ceremony(async () => await startRegistration({ optionsJSON: await options.json() }))
    if (response === null) return await showAccount()
    const added = await call(url('Passkeys'), json({ response, name: navigator.platform || 'Passkey', password }))
    await showAccount()
    say(added.ok ? 'Your passkey is added.' : added.status === 409 ? 'You have as many passkeys as allowed: remove one first.' : await refusal(added), added.ok)
  }

  /** What a refused POST /Passkeys tells the user: the password comes first. */
  async function refusal (response) {
    if (response.status === 429) return 'Too many attempts: wait a little.'
    return await problemCode(response) === 'FST_PWAUTH_INVALID_CREDENTIALS' ? 'That password did not work.' : 'That passkey was not accepted.'
  }

  /** Reauthenticate with a passkey: its answer, or null when the user cancelled the ceremony. */
  async function confirm () {
    const options = await call(url('Passkeys/ReauthOptions'), json())
    if (!options.ok) return options
    const passkey = await ceremony(async () => await startAuthentication({ optionsJSON: await options.json() }))
    if (passkey === null) return null
    return await call(url('Reauthenticate'), json({ passkey }))
  }

  $('passkey-stepup').onclick = async () => {
    const confirmed = await confirm()
    if (confirmed === null) return
    say(confirmed.ok ? 'Confirmed: you can change your settings for a few minutes.' : 'That passkey did not work.', confirmed.ok)
  }

  const supported = browserSupportsWebAuthn()
  $('passkey-login').hidden = !supported
  $('passkey-add').hidden = !supported
  $('passkey-stepup').hidden = true // until listPasskeys finds one
  /** Whether the re-authentication prompt offers a passkey: this browser has WebAuthn and the account passkeys. */
  const canConfirm = () => supported && count > 0
  return { listPasskeys, offerAutofill, confirm, canConfirm }
}
