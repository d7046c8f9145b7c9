// The demo's browser app: cookie mode, no build step. The access token lives in memory only; at page load
// (and after any 401) a Refresh, which sends the HttpOnly cookie, tells whether the browser is signed in.
const auth = new URL('app/Auth/', document.baseURI)
const me = new URL('app/me', document.baseURI)
let accessToken = null

const $ = (id) => document.getElementById(id)
const show = (id) => { for (const view of ['login', 'register', 'verify', 'forgot', 'reset', 'account', 'reauth']) $(view).hidden = view !== id }
// `news`: good news or information, shown calm; otherwise the message reports a problem.
const say = (text, news = false) => { $('message').textContent = text; $('message').className = news ? 'news' : '' }

async function post (url, body) {
  return await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(accessToken === null ? {} : { authorization: `Bearer ${accessToken}` }) },
    body: JSON.stringify(body ?? {})
  })
}

/** Refresh: a new access token if the cookie's session is live (Content-Type JSON and a body of {} are required). */
async function refresh () {
  const response = await fetch(new URL('Refresh', auth), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  accessToken = response.ok ? (await response.json()).accessToken : null
  return accessToken !== null
}

/** A call with the access token, refreshed and retried once on 401. */
async function call (url, init = {}) {
  const send = async () => await fetch(url, { ...init, headers: { ...init.headers, authorization: `Bearer ${accessToken}` } })
  let response = await send()
  if (response.status === 401 && (await response.clone().json()).code !== 'FST_PWAUTH_REAUTHENTICATION_REQUIRED' && await refresh()) response = await send()
  return response
}

/** Runs `action`; when it needs a recent password check, asks for the password, reauthenticates and runs it again. */
async function withRecentAuth (action) {
  const response = await action()
  if (response.status !== 401 || (await response.clone().json()).code !== 'FST_PWAUTH_REAUTHENTICATION_REQUIRED') return response
  const password = await askPassword()
  if (password === null) return response
  const confirmed = await call(new URL('Reauthenticate', auth), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) })
  if (!confirmed.ok) { say('That password did not work.'); return confirmed }
  return await action()
}

function askPassword () {
  show('reauth')
  return new Promise((resolve) => {
    const done = (value) => { $('reauth').onsubmit = null; $('reauth-cancel').onclick = null; $('reauth').reset(); show('account'); resolve(value) }
    $('reauth').onsubmit = (event) => { event.preventDefault(); done(new FormData($('reauth')).get('password')) }
    $('reauth-cancel').onclick = () => done(null)
  })
}

async function showAccount () {
  const response = await call(me)
  if (!response.ok) return signedOut()
  $('email').textContent = (await response.json()).email
  const sessions = await call(new URL('Sessions', auth))
  const list = sessions.ok ? await sessions.json() : []
  $('sessions').replaceChildren(...list.map((session) => {
    const item = document.createElement('li')
    const text = document.createElement('span')
    text.textContent = `${session.current ? 'This browser' : session.userAgent || 'Unknown device'} `
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
  show('account')
}

function signedOut (text = '') {
  accessToken = null
  show('login')
  say(text, true)
}

$('login').onsubmit = async (event) => {
  event.preventDefault()
  const form = new FormData($('login'))
  const response = await post(new URL('Login', auth), { email: form.get('email'), password: form.get('password') })
  if (!response.ok) return say(response.status === 429 ? 'Too many attempts: wait a little.' : 'Wrong e-mail or password.')
  accessToken = (await response.json()).accessToken
  $('login').reset()
  say('')
  await showAccount()
}

$('logout').onclick = async () => {
  // Works with an expired access token too: the cookie's session ends, and the cookie is cleared.
  await post(new URL('Logout', auth))
  signedOut('Signed out.')
}

$('reload-me').onclick = async () => { await showAccount() }

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
const linkView = () => resetToken() !== null ? 'reset' : verifyToken() !== null ? 'verify' : null
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
  const response = await post(new URL('VerifyEmail', auth), { token: verifyToken() })
  window.history.replaceState(null, '', window.location.pathname)
  signedOut()
  if (response.status === 204) say('Your address is confirmed and your account exists: sign in.', true)
  else say('This link is not valid any more: register again, or sign in.')
}

$('reset').onsubmit = async (event) => {
  event.preventDefault()
  const form = new FormData($('reset'))
  const response = await post(new URL('ResetPassword', auth), { token: resetToken(), newPassword: form.get('newPassword'), confirmNewPassword: form.get('confirmNewPassword') })
  if (response.status === 204) {
    window.history.replaceState(null, '', window.location.pathname)
    $('reset').reset()
    return signedOut('Your password is changed: sign in with the new one.')
  }
  const problem = await response.json().catch(() => ({}))
  if (problem.code === 'FST_PWAUTH_RESET_TOKEN_INVALID') return say('This link is not valid any more: ask for a new one.')
  if (problem.code === 'FST_PWAUTH_PASSWORD_MISMATCH') return say('The two passwords differ.')
  if (problem.code === 'FST_PWAUTH_WEAK_PASSWORD') return say(`Choose another password (${problem.reasons.join(', ').replaceAll('_', ' ')}).`)
  say('That did not work: try again.')
}

if (linkView() !== null) show(linkView())
else if (await refresh()) await showAccount()
else signedOut()
