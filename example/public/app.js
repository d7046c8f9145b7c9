// The demo's browser app: cookie mode, no build step, on fastify-password-auth/client (served as ./client/),
// which keeps the access token, refreshes it (once for all the tabs) and signs every tab out when the session
// ends. Page scripts cannot see the refresh cookie: a marker in localStorage, set while signed in, says whether
// asking is worth it, so a first, signed-out load sends no Refresh bound to fail.
import { createAuthClient } from './client/index.js'
import { installPasskeys } from './passkeys.js'

const auth = new URL('app/Auth/', document.baseURI)
const me = new URL('app/me', document.baseURI)
// Passkeys: @simplewebauthn/browser's bundle, which index.html loads as webauthn.js (a global).
const client = createAuthClient({ mode: 'cookie', prefix: auth.pathname, webauthn: async () => globalThis.SimpleWebAuthnBrowser })

const $ = (id) => document.getElementById(id)
const VIEWS = ['login', 'register', 'verify', 'forgot', 'reset', 'account', 'reauth', 'code', 'mfa-setup', 'recovery', 'mfa-disable',
  'change-email', 'email-change-confirm', 'email-revert', 'delete', 'passkey-new', 'export']
// A message outlives the change of view its own action makes ("Signed out." on the sign-in form), but not the
// view changes of the user's next action: a click or a submit makes it stale.
let current = null
let messageStale = false
for (const type of ['click', 'submit']) document.addEventListener(type, () => { messageStale = true }, true)
const show = (id) => {
  if (id !== current && messageStale) say('')
  current = id
  for (const view of VIEWS) $(view).hidden = view !== id
}
const json = (body) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) })
const problemCode = async (response) => (await response.clone().json().catch(() => ({}))).code
// `news`: good news or information, shown calm; otherwise the message reports a problem.
const say = (text, news = false) => { $('message').textContent = text; $('message').className = news ? 'news' : ''; messageStale = false }
const SIGNED_IN = 'fastify-password-auth-demo:signed-in'
const maySignedIn = () => localStorage.getItem(SIGNED_IN) !== null

/** A route that needs no session. */
const post = async (url, body) => await fetch(url, json(body))

/** A correct password that a data breach made public signs nobody in (contract §20): only the mailed link replaces it. */
const RESET_REQUIRED = 'FST_PWAUTH_PASSWORD_RESET_REQUIRED'
/** What an AuthError of the client says to the user: no answer, too many attempts, or `otherwise`. */
const failure = (err, otherwise) => err?.status === 0 ? 'The server did not answer: try again.' : err?.status === 429 ? 'Too many attempts: wait a little.' : otherwise
const BREACHED_TEXT = 'That password appeared in a data breach, so it can no longer sign you in. We sent a link to set a new one to your e-mail address.'

/** A call with the access token: the client refreshes it only when it expired (a wrong password or code is not sent twice). */
const call = async (url, init = {}) => await client.fetch(url, init)

/**
 * Runs `action`; when it needs a recent sign-in, asks for the password (or, where the browser and the account
 * have passkeys, a passkey), reauthenticates and runs it again.
 */
async function withRecentAuth (action) {
  const response = await action()
  if (response.status !== 401 || (await response.clone().json()).code !== 'FST_PWAUTH_REAUTHENTICATION_REQUIRED') return response
  const proof = await askProof()
  if (proof === null) return response
  if (proof === USE_PASSKEY) {
    const confirmed = await passkeys.confirm()
    if (confirmed === null) return response
    if (!confirmed.ok) { say('That passkey did not work.'); return confirmed }
    return await action()
  }
  const password = proof
  let confirmed = await call(new URL('Reauthenticate', auth), json({ password }))
  // With two-step sign-in on, the password alone is not enough: ask for a code too.
  if (await problemCode(confirmed) === 'FST_PWAUTH_MFA_CODE_INVALID') {
    const code = await askCode('account')
    if (code === null) return confirmed
    confirmed = await call(new URL('Reauthenticate', auth), json({ password, code }))
  }
  if (await problemCode(confirmed) === RESET_REQUIRED) { say(BREACHED_TEXT); return confirmed }
  if (!confirmed.ok) { say('That did not work: check your password and code.'); return confirmed }
  return await action()
}

/**
 * Shows the code form; resolves what was typed, or null (cancelled). Then `back` is shown. `remember`: the
 * sign-in's second step, which offers to remember this device (resolved as { code, remember }).
 */
function askCode (back, { remember = false } = {}) {
  $('remember-label').hidden = !remember
  show('code')
  return new Promise((resolve) => {
    const done = (value) => { $('code').onsubmit = null; $('code-cancel').onclick = null; $('code').reset(); show(back); resolve(value) }
    $('code').onsubmit = (event) => {
      event.preventDefault()
      const form = new FormData($('code'))
      done(remember ? { code: form.get('code'), remember: form.get('remember') === 'on' } : form.get('code'))
    }
    $('code-cancel').onclick = () => done(null)
  })
}

/** "Chrome on macOS": what the sessions list says of a session's User-Agent (parsed by the server). */
const deviceName = ({ browser, os }) => `${browser === 'Unknown' ? 'Unknown browser' : browser}${os === 'Unknown' ? '' : ` on ${os}`}`

const USE_PASSKEY = Symbol('passkey')

/** The re-authentication prompt: resolves the password typed, USE_PASSKEY, or null (cancelled). */
function askProof () {
  const passkeyOffered = passkeys.canConfirm()
  $('reauth-passkey').hidden = !passkeyOffered
  $('reauth-or-passkey').hidden = !passkeyOffered
  show('reauth')
  return new Promise((resolve) => {
    const done = (value) => {
      $('reauth').onsubmit = null; $('reauth-cancel').onclick = null; $('reauth-passkey').onclick = null
      $('reauth').reset(); show('account'); resolve(value)
    }
    $('reauth').onsubmit = (event) => { event.preventDefault(); done(new FormData($('reauth')).get('password')) }
    $('reauth-passkey').onclick = () => done(USE_PASSKEY)
    $('reauth-cancel').onclick = () => done(null)
  })
}

async function showAccount () {
  const response = await call(me)
  if (!response.ok) return signedOut()
  localStorage.setItem(SIGNED_IN, '1')
  $('email').textContent = (await response.json()).email
  const sessions = await call(new URL('Sessions', auth))
  const list = sessions.ok ? await sessions.json() : []
  $('end-others').hidden = list.length < 2
  $('sessions').replaceChildren(...list.map((session) => {
    const item = document.createElement('li')
    const text = document.createElement('span')
    text.textContent = `${deviceName(session.device)}${session.current ? ' (this browser)' : ''}${session.trustedDevice ? ', signed in without a code (trusted device)' : ''} `
    const when = document.createElement('small')
    when.textContent = `since ${new Date(session.createdAt).toLocaleString()}`
    text.append(when)
    item.append(text)
    if (!session.current) {
      const end = document.createElement('button')
      end.type = 'button'
      end.className = 'secondary'
      end.textContent = 'Sign out'
      end.onclick = async () => {
        const ended = await withRecentAuth(async () => await call(new URL(`Sessions/${encodeURIComponent(session.id)}`, auth), { method: 'DELETE' }))
        say(ended.ok ? 'That session is signed out.' : '', true)
        await showAccount()
      }
      item.append(end)
    }
    return item
  }))
  await showTrustedDevices()
  const mfa = await call(new URL('Mfa', auth))
  const { enabled, recoveryCodesLeft } = mfa.ok ? await mfa.json() : { enabled: false }
  $('mfa-status').textContent = enabled
    ? `On: signing in needs a code from your authenticator app. ${recoveryCodesLeft} recovery code(s) left.`
    : 'Off: your password alone signs you in.'
  $('mfa-on').hidden = enabled
  $('mfa-off').hidden = !enabled
  await passkeys.listPasskeys()
  // A link opened while the account was loading (#email-change=…) keeps its form.
  show(linkView() ?? 'account')
}

/** The devices that sign in without a code (remembered at the code step), each removable. */
async function showTrustedDevices () {
  const response = await call(new URL('Sessions/Devices', auth))
  const list = response.ok ? await response.json() : []
  $('trusted').hidden = list.length === 0
  $('trusted-devices').replaceChildren(...list.map((device) => {
    const item = document.createElement('li')
    const text = document.createElement('span')
    text.textContent = `${device.label} `
    const until = document.createElement('small')
    until.textContent = `until ${new Date(device.trustedUntil).toLocaleDateString()}`
    text.append(until)
    const forget = document.createElement('button')
    forget.type = 'button'
    forget.className = 'secondary'
    forget.textContent = 'Forget'
    forget.onclick = async () => {
      const removed = await withRecentAuth(async () => await call(new URL(`Sessions/Devices/${encodeURIComponent(device.id)}`, auth), { method: 'DELETE' }))
      say(removed.ok ? 'That device needs a code again.' : '', true)
      await showAccount()
    }
    item.append(text, forget)
    return item
  }))
}

$('mfa-on').onclick = async () => {
  // Setup changes nothing until Confirm, whose password stands for a recent sign-in: no Reauthenticate here.
  const response = await call(new URL('Mfa/Setup', auth), { method: 'POST' })
  if (!response.ok) return say('That did not work: try again.')
  const { secret, otpauthUrl } = await response.json()
  // The QR code is an image the example server renders with the qrcode package: the secret is scanned, not read.
  const qr = await call(new URL('qr', new URL('..', auth)), json({ text: otpauthUrl }))
  $('qr').src = qr.ok ? (await qr.json()).dataUrl : ''
  $('mfa-secret').textContent = secret
  say('')
  show('mfa-setup')
}

$('mfa-setup-cancel').onclick = async () => { say(''); await showAccount() }

/** What a refused Confirm or Disable tells the user: the password comes first, then the code. */
async function switchProblem (response) {
  if (response.status === 429) return 'Too many attempts: wait a little.'
  return await problemCode(response) === 'FST_PWAUTH_INVALID_CREDENTIALS' ? 'That password did not work.' : 'That code did not work: enter the one the app shows now.'
}

$('mfa-confirm').onsubmit = async (event) => {
  event.preventDefault()
  const form = new FormData($('mfa-confirm'))
  const response = await call(new URL('Mfa/Confirm', auth), json({ code: form.get('code'), password: form.get('password') }))
  if (!response.ok) return say(await switchProblem(response))
  $('mfa-confirm').reset()
  $('recovery-codes').replaceChildren(...(await response.json()).recoveryCodes.map((recoveryCode) => {
    const item = document.createElement('li')
    item.textContent = recoveryCode
    return item
  }))
  say('Two-step sign-in is on. Every other session was signed out.', true)
  show('recovery')
}

$('recovery-done').onclick = async () => { $('recovery-codes').replaceChildren(); say(''); await showAccount() }

$('mfa-off').onclick = () => { say(''); show('mfa-disable') }
$('mfa-disable-cancel').onclick = async () => { $('mfa-disable').reset(); say(''); await showAccount() }

$('mfa-disable').onsubmit = async (event) => {
  event.preventDefault()
  const form = new FormData($('mfa-disable'))
  const response = await call(new URL('Mfa/Disable', auth), json({ code: form.get('code'), password: form.get('password') }))
  if (!response.ok) return say(await switchProblem(response))
  $('mfa-disable').reset()
  say('Two-step sign-in is off. Every other session was signed out.', true)
  await showAccount()
}

function signedOut (text = '') {
  localStorage.removeItem(SIGNED_IN)
  show('login')
  say(text, true)
  passkeys.offerAutofill().catch(() => {})
}

$('login').onsubmit = async (event) => {
  event.preventDefault()
  const form = new FormData($('login'))
  let result
  try {
    result = await client.login({ email: form.get('email'), password: form.get('password') })
  } catch (err) {
    return say(err.code === RESET_REQUIRED ? BREACHED_TEXT : failure(err, 'Wrong e-mail or password.'))
  }
  $('login').reset()
  say('')
  if (result.mfaRequired) return await secondStep(result.mfaToken)
  await showAccount()
}

/** The second step of a sign-in with two-step sign-in on: a code for the challenge Login answered. */
async function secondStep (mfaToken) {
  const answer = await askCode('login', { remember: true })
  if (answer === null) return say('')
  try {
    await client.loginMfa({ mfaToken, code: answer.code, rememberDevice: answer.remember })
  } catch (err) {
    say(err.status === 429 ? 'Too many wrong codes: wait a little.' : failure(err, 'That code did not work.'))
    // The challenge survives a few wrong codes: ask again until it is used up.
    return err.code === 'FST_PWAUTH_MFA_CODE_INVALID' ? await secondStep(mfaToken) : undefined
  }
  say('')
  await showAccount()
}

$('logout').onclick = async () => {
  // Works with an expired access token too: the cookie's session ends, the cookie is cleared, every tab is signed out.
  try {
    await client.logout()
  } catch (err) {
    return say(failure(err, 'That did not work: try again.'))
  }
  signedOut('Signed out.')
}

$('reload-me').onclick = async () => { say(''); await showAccount() }

$('end-others').onclick = async () => {
  const response = await withRecentAuth(async () => await call(new URL('Sessions/EndOthers', auth), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
  if (response.ok) say(`Signed out ${(await response.json()).ended} other session(s).`, true)
  await showAccount()
}

$('forgot-link').onclick = () => { $('forgot').email.value = $('login').email.value; show('forgot'); say('') }
$('forgot-cancel').onclick = () => signedOut()

$('forgot').onsubmit = async (event) => {
  event.preventDefault()
  const response = await post(new URL('ForgotPassword', auth), { email: new FormData($('forgot')).get('email') })
  if (response.status !== 202) return say(response.status === 429 ? 'Too many requests: wait a little.' : 'That is not an e-mail address.')
  $('forgot').reset()
  signedOut('If this address has an account, a link to reset its password is on its way.')
}

// Links carry their token in the fragment (#token=… to reset, #verify=… to confirm an address): browsers
// never send it to a server or in a Referer.
const fragment = (name) => new URLSearchParams(window.location.hash.slice(1)).get(name)
const resetToken = () => fragment('token')
const verifyToken = () => fragment('verify')
const LINKS = { token: 'reset', verify: 'verify', 'email-change': 'email-change-confirm', 'email-revert': 'email-revert' }
const linkView = () => Object.entries(LINKS).find(([name]) => fragment(name) !== null)?.[1] ?? null
window.onhashchange = () => { if (linkView() !== null) { say(''); show(linkView()) } }

$('register-link').onclick = () => { $('register').email.value = $('login').email.value; show('register'); say('') }
$('register-cancel').onclick = () => signedOut()

$('register').onsubmit = async (event) => {
  event.preventDefault()
  const form = new FormData($('register'))
  const response = await post(new URL('Register', auth), { email: form.get('email'), password: form.get('password'), confirmPassword: form.get('confirmPassword') })
  if (response.status === 202) {
    $('register').reset()
    return signedOut('Check your mailbox: a link to confirm your address is on its way.')
  }
  const problem = await response.json().catch(() => ({}))
  if (problem.code === 'FST_PWAUTH_PASSWORD_MISMATCH') return say('The two passwords differ.')
  if (problem.code === 'FST_PWAUTH_WEAK_PASSWORD') return say(`Choose another password (${problem.reasons.join(', ').replaceAll('_', ' ')}).`)
  say(response.status === 429 ? 'Too many requests: wait a little.' : 'That did not work: check the address.')
}

$('verify').onsubmit = async (event) => {
  event.preventDefault()
  // Whoever opens the link sets the account's password: usually the one typed at sign-up.
  const response = await post(new URL('VerifyEmail', auth), { token: verifyToken(), password: new FormData($('verify')).get('password') })
  if (response.status === 429) return say('Too many attempts: wait a little.')
  const problem = response.status === 204 ? {} : await response.json().catch(() => ({}))
  if (problem.code === 'FST_PWAUTH_WEAK_PASSWORD') return say(`Choose another password (${problem.reasons.join(', ').replaceAll('_', ' ')}). The link still works.`)
  if (response.status !== 204) return say('This link does not work any more: it was used or expired, or the address has an account. Sign in, or sign up again.')
  window.history.replaceState(null, '', window.location.pathname)
  $('verify').reset()
  signedOut('Your address is confirmed and your account exists: sign in.')
}

$('reset').onsubmit = async (event) => {
  event.preventDefault()
  const form = new FormData($('reset'))
  const body = { token: resetToken(), newPassword: form.get('newPassword'), confirmNewPassword: form.get('confirmNewPassword') }
  let response = await post(new URL('ResetPassword', auth), body)
  // An account with two-step sign-in on needs a code to reset its password too.
  if (await problemCode(response) === 'FST_PWAUTH_MFA_CODE_INVALID') {
    const code = await askCode('reset')
    if (code === null) return
    response = await post(new URL('ResetPassword', auth), { ...body, code })
  }
  if (response.status === 204) {
    window.history.replaceState(null, '', window.location.pathname)
    $('reset').reset()
    return signedOut('Your password is changed: sign in with the new one.')
  }
  const problem = await response.json().catch(() => ({}))
  if (problem.code === 'FST_PWAUTH_RESET_TOKEN_INVALID') return say('This link is not valid any more: ask for a new one.')
  if (problem.code === 'FST_PWAUTH_MFA_CODE_INVALID') return say('That code did not work: try again.')
  if (problem.code === 'FST_PWAUTH_PASSWORD_MISMATCH') return say('The two passwords differ.')
  if (problem.code === 'FST_PWAUTH_WEAK_PASSWORD') return say(`Choose another password (${problem.reasons.join(', ').replaceAll('_', ' ')}).`)
  say('That did not work: try again.')
}

const passkeys = installPasskeys({ client, call, json, auth, say, show, showAccount, withRecentAuth, problemCode, failure, $ })
$('email-change').onclick = () => { say(''); show('change-email') }
$('change-email-cancel').onclick = async () => { $('change-email').reset(); say(''); await showAccount() }

/** Why a change of address or a deletion, which take the password, was refused; `otherwise` for anything else. */
async function passwordProblem (response, otherwise) {
  if (response.status === 429) return 'Too many attempts: wait a little.'
  switch (await problemCode(response)) {
    case 'FST_PWAUTH_INVALID_CREDENTIALS': return 'That password did not work.'
    case 'FST_PWAUTH_MFA_REQUIRED': return 'Sign in with your code first.'
    case RESET_REQUIRED: return BREACHED_TEXT
  }
  return otherwise
}

// The password stands for a recent sign-in: no reauthentication first.
$('change-email').onsubmit = async (event) => {
  event.preventDefault()
  const form = new FormData($('change-email'))
  const response = await call(new URL('ChangeEmail', auth), json({ newEmail: form.get('newEmail'), password: form.get('password') }))
  if (response.status !== 202) return say(await passwordProblem(response, 'That did not work: check the address.'))
  $('change-email').reset()
  say('Check the new mailbox: a link to confirm it is on its way. Nothing changes until you open it.', true)
  await showAccount()
}

/** After a link was used: the token leaves the address bar. */
const forgetLink = () => { window.history.replaceState(null, '', window.location.pathname) }

$('email-change-confirm').onsubmit = async (event) => {
  event.preventDefault()
  const response = await post(new URL('VerifyEmailChange', auth), { token: fragment('email-change') })
  forgetLink()
  if (response.status !== 204) return signedOut('This link is not valid any more: ask for a new change.')
  if (await client.refresh().catch(() => false)) { say('Your account has its new address.', true); return await showAccount() }
  signedOut('Your account has its new address: sign in with it.')
}

$('email-revert').onsubmit = async (event) => {
  event.preventDefault()
  const form = new FormData($('email-revert'))
  const response = await post(new URL('RevertEmailChange', auth), { token: fragment('email-revert'), newPassword: form.get('newPassword'), confirmNewPassword: form.get('confirmNewPassword') })
  if (response.status === 204) {
    forgetLink()
    $('email-revert').reset()
    return signedOut('Your account is yours again, at its old address: sign in with the new password.')
  }
  const problem = await response.json().catch(() => ({}))
  if (problem.code === 'FST_PWAUTH_PASSWORD_MISMATCH') return say('The two passwords differ.')
  if (problem.code === 'FST_PWAUTH_WEAK_PASSWORD') return say(`Choose another password (${problem.reasons.join(', ').replaceAll('_', ' ')}).`)
  say('This link is not valid any more.')
}

$('delete-account').onclick = () => { say(''); show('delete') }
$('delete-cancel').onclick = async () => { $('delete').reset(); say(''); await showAccount() }

$('delete').onsubmit = async (event) => {
  event.preventDefault()
  const response = await call(new URL('DeleteAccount', auth), json({ password: new FormData($('delete')).get('password') }))
  if (response.status === 409) return say((await response.json()).detail)
  if (response.status !== 204) return say(await passwordProblem(response, 'That did not work: try again.'))
  $('delete').reset()
  signedOut('Your account is deleted.')
}

$('export-account').onclick = async () => {
  const response = await withRecentAuth(async () => await call(new URL('Account/Export', auth)))
  // A refused or cancelled confirmation has said what it had to (withRecentAuth).
  if (!response.ok) return response.status === 401 ? undefined : say('That did not work: try again.')
  const text = JSON.stringify(await response.json(), null, 2)
  $('export-json').textContent = text
  URL.revokeObjectURL($('export-download').href)
  $('export-download').href = URL.createObjectURL(new Blob([text], { type: 'application/json' }))
  say('')
  show('export')
}
$('export-done').onclick = async () => { $('export-json').textContent = ''; await showAccount() }

if (linkView() !== null) show(linkView())
else if (maySignedIn() && await client.signedIn().catch(() => false)) await showAccount()
else signedOut()
