import t, { type Test } from 'tap'
import { hashPassword, MemoryMfaStore } from '../../lib/index.js'
import { CHEAP_ARGON2, EMAIL, NEW_PASSWORD, PASSWORD, PLUGIN_TIMEOUT_MS } from '../helpers/app.js'
import { accountApp, sleep } from '../helpers/account.js'
import { currentStep, totpCode } from '../helpers/mfa.js'
import { expectProblem } from '../helpers/problem.js'

const NEW_EMAIL = 'ada@example.net'
const TEN_MINUTES = 600_000

t.test('the account routes are off unless the host turns them on', async (t) => {
  const { buildTestApp } = await import('../helpers/app.js')
  const { app, token } = await buildTestApp(t)
  const headers = { authorization: `Bearer ${await token()}` }
  for (const [method, url] of [['POST', '/Auth/ChangeEmail'], ['POST', '/Auth/VerifyEmailChange'], ['POST', '/Auth/RevertEmailChange'], ['POST', '/Auth/DeleteAccount'], ['GET', '/Auth/Account/Export']] as const) {
    t.equal((await app.inject({ method, url, headers, payload: method === 'POST' ? {} : undefined })).statusCode, 404, url)
  }
})

t.test('ChangeEmail changes nothing before the new address verifies (Better Auth #7196, Supabase #2600); the link does, once', async (t) => {
  const { post, changeToken, accounts, ada, login, message, token, events } = await accountApp(t)
  const access = await token()
  const link = await changeToken(access, NEW_EMAIL)
  t.equal((await accounts.findById(ada.id))!.email, EMAIL, 'still the old address')
  t.equal((await login(EMAIL)).statusCode, 200, 'the old address still signs in')
  t.equal((await login(NEW_EMAIL)).statusCode, 401, 'the new one does not yet')
  const notice = await message('email_change_requested', EMAIL)
  t.equal(notice.newEmail, 'a***@example.net', 'the old address hears of it, the new address masked')
  t.equal(notice.token, undefined, 'and gets no link')

  t.equal((await post('/VerifyEmailChange', undefined, { token: link })).statusCode, 204)
  t.equal((await accounts.findById(ada.id))!.email, NEW_EMAIL)
  t.equal((await login(NEW_EMAIL)).statusCode, 200)
  t.equal((await login(EMAIL)).statusCode, 401)
  expectProblem(t, await post('/VerifyEmailChange', undefined, { token: link }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'a used link')
  const changed = await message('email_changed', EMAIL)
  t.match(changed, { token: /^[\w-]{22}\.[\w-]{43}$/, newEmail: 'a***@example.net' }, 'the old address gets a revert link')
  t.ok(changed.expiresAt! > Date.now() + 7 * 86_400_000 - 60_000, 'that lives 7 days')
  t.ok(events.some((e) => e.type === 'account.email_changed'))
  // No token in any event.
  t.notOk(JSON.stringify(events).includes(link.slice(23)), 'the link token is in no event')
})

t.test('ChangeEmail: one 202 for a free, taken, pending or own address; what differs happens after the answer', async (t) => {
  const { MemoryOneTimeTokenStore } = await import('../../lib/index.js')
  const inner = new MemoryOneTimeTokenStore()
  // Token writes and deliveries are slow: an answer that waited for them would show it. Long enough that a
  // loaded CI machine cannot make a prompt answer (one argon2 verification of the password) look slow.
  const SLOW_MS = 1500
  const slowTokens = {
    find: inner.find.bind(inner),
    consume: inner.consume.bind(inner),
    consumeFirst: inner.consumeFirst.bind(inner),
    list: inner.list.bind(inner),
    remove: inner.remove.bind(inner),
    put: async (...args: Parameters<typeof inner.put>) => { await sleep(SLOW_MS); await inner.put(...args) }
  }
  const { post, accounts, token, messages, events } = await accountApp(t, { oneTimeTokens: slowTokens, deliver: async (m) => { await sleep(SLOW_MS); messages.push(m) } })
  accounts.add({ email: 'bob@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const access = await token()
  const answers = []
  // free, taken, pending (asked just before), own, and own in another case
  for (const newEmail of ['free@example.net', 'bob@example.com', 'free@example.net', EMAIL, ' ADA@Example.com ']) {
    const started = performance.now()
    const response = await post('/ChangeEmail', access, { newEmail, password: PASSWORD })
    const ms = performance.now() - started
    const { date, ...headers } = response.headers
    answers.push({ status: response.statusCode, body: response.body, headers })
    t.ok(ms < SLOW_MS / 2, `${newEmail}: answered in ${Math.round(ms)} ms, before the ${SLOW_MS} ms token write and delivery`)
  }
  t.equal(answers[0]!.status, 202)
  for (const answer of answers.slice(1)) t.same(answer, answers[0], 'byte for byte the same answer')
  // Every request's write and delivery, one after the other at most.
  for (let waited = 0; waited < 10 * SLOW_MS && messages.length < 6; waited += 50) await sleep(50)
  await sleep(SLOW_MS)
  t.same(messages.filter((m) => m.type === 'email_change').map((m) => m.to), ['free@example.net', 'free@example.net'], 'links only to the free address')
  t.same(messages.filter((m) => m.type === 'account_exists').map((m) => m.to), ['bob@example.com'], 'the taken address\'s owner is told')
  t.equal(messages.filter((m) => m.type === 'email_change_requested').length, 3, 'the old address hears of every change but to itself')
  t.same(events.filter((e) => e.type === 'account.email_change_requested').map((e) => 'outcome' in e && e.outcome).sort(),
    ['account_exists', 'own_address', 'own_address', 'sent', 'sent'])
})

t.test('ChangeEmail takes the password (a fresh token alone cannot move the account), counted as Login counts it; no Reauthenticate needed', async (t) => {
  const { post, clock, token, login, messages } = await accountApp(t)
  const fresh = await token()
  for (const [password, label] of [[undefined, 'no password'], ['a wrong password', 'a wrong one']] as const) {
    expectProblem(t, await post('/ChangeEmail', fresh, { newEmail: NEW_EMAIL, ...password === undefined ? {} : { password } }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', label)
  }
  await sleep(100)
  t.same(messages.filter((m) => m.type !== 'new_device_login'), [], 'nothing is sent')
  expectProblem(t, await post('/ChangeEmail', undefined, { newEmail: NEW_EMAIL, password: PASSWORD }), 401, 'FST_PWAUTH_TOKEN_MISSING')
  expectProblem(t, await post('/ChangeEmail', fresh, { newEmail: 'not an address', password: PASSWORD }), 400, 'FST_PWAUTH_VALIDATION')
  // The password stands for a recent authentication: a session whose last proof is old needs no Reauthenticate.
  clock.advance(-TEN_MINUTES)
  const old = await token()
  clock.advance(TEN_MINUTES)
  t.equal((await post('/ChangeEmail', old, { newEmail: NEW_EMAIL, password: PASSWORD })).statusCode, 202)

  // The failures count on the e-mail's counter with Login's: 5 block it for everyone but a known device.
  const device = (await login(EMAIL, PASSWORD)).json().deviceToken
  for (let i = 0; i < 5; i++) expectProblem(t, await post('/ChangeEmail', fresh, { newEmail: NEW_EMAIL, password: 'wrong again' }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS')
  expectProblem(t, await login(EMAIL, PASSWORD), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'Login is blocked')
  expectProblem(t, await post('/ChangeEmail', fresh, { newEmail: NEW_EMAIL, password: PASSWORD }), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'and so is ChangeEmail')
  t.equal((await post('/ChangeEmail', fresh, { newEmail: NEW_EMAIL, password: PASSWORD, deviceToken: device })).statusCode, 202, 'but not the owner\'s known device')
})

t.test('ChangeEmail with two factors on needs a session that passed them (ASP.NET Identity\'s /manage/info)', async (t) => {
  const { mfaApp } = await import('../helpers/mfa.js')
  const mfa = await mfaApp(t, { account: { emailChange: true } })
  const { accessToken } = await mfa.enable()
  // The confirming session proved a code; a password-only session of the same account (a token minted by the host API) has not.
  const passwordOnly = (await mfa.app.passwordAuth.sessions.start(mfa.ada.id, { request: { log: mfa.app.log, ip: '127.0.0.1', headers: {} } as never, reply: { header: () => {} } as never }))!.accessToken
  expectProblem(t, await mfa.post('/ChangeEmail', passwordOnly, { newEmail: NEW_EMAIL, password: PASSWORD }), 401, 'FST_PWAUTH_MFA_REQUIRED')
  expectProblem(t, await mfa.post('/ChangeEmail', accessToken, { newEmail: NEW_EMAIL, password: 'a wrong password' }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS')
  t.equal((await mfa.post('/ChangeEmail', accessToken, { newEmail: NEW_EMAIL, password: PASSWORD })).statusCode, 202)
})

t.test('ChangeEmail: a newer request ends the pending change whatever its address, so an older link tells nothing of another address (an account oracle)', async (t) => {
  const { post, changeToken, token, accounts, ada } = await accountApp(t)
  accounts.add({ email: 'bob@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const access = await token()
  // Free, taken, the account's own in two spellings, and the older link's own address (pending).
  const probes = ['free@example.net', 'bob@example.com', EMAIL, ' ADA@Example.com ', 'older-4@example.net']
  for (const [i, newEmail] of probes.entries()) {
    const older = await changeToken(access, `older-${i}@example.net`)
    t.equal((await post('/ChangeEmail', access, { newEmail, password: PASSWORD })).statusCode, 202)
    expectProblem(t, await post('/VerifyEmailChange', undefined, { token: older }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', `an older link is dead after a request for ${newEmail}`)
  }
  t.equal((await accounts.findById(ada.id))!.email, EMAIL)
})

t.test('VerifyEmailChange: of 12 concurrent uses of one link exactly one succeeds (Devise CVE-2026-32700)', async (t) => {
  const { post, changeToken, token, accounts, ada } = await accountApp(t)
  const link = await changeToken(await token(), NEW_EMAIL)
  const statuses = (await Promise.all(Array.from({ length: 12 }, async () => await post('/VerifyEmailChange', undefined, { token: link })))).map((r) => r.statusCode)
  t.equal(statuses.filter((s) => s === 204).length, 1, `one winner in ${statuses.join(',')}`)
  t.equal(statuses.filter((s) => s === 400).length, 11)
  t.equal((await accounts.findById(ada.id))!.email, NEW_EMAIL)
})

t.test('VerifyEmailChange: a newer request replaces the pending one; a password change or a taken address outruns the link', async (t) => {
  const { post, changeToken, token, accounts, ada, changePassword } = await accountApp(t)
  const access = await token()
  const first = await changeToken(access, 'first@example.net')
  const second = await changeToken(access, 'second@example.net')
  expectProblem(t, await post('/VerifyEmailChange', undefined, { token: first }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'replaced')
  // The typed address got an account meanwhile (allauth 65.12.1, Keycloak #43738): the link cannot take it.
  accounts.add({ email: 'second@example.net', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  expectProblem(t, await post('/VerifyEmailChange', undefined, { token: second }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'taken meanwhile')
  t.equal((await accounts.findById(ada.id))!.email, EMAIL)

  const third = await changeToken(await token(), 'third@example.net')
  t.equal((await changePassword({ email: EMAIL, currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).statusCode, 204)
  expectProblem(t, await post('/VerifyEmailChange', undefined, { token: third }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'outrun by a password change')
  t.equal((await accounts.findById(ada.id))!.email, EMAIL)
  expectProblem(t, await post('/VerifyEmailChange', undefined, { token: 'x'.repeat(66) }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'malformed')
})

t.test('VerifyEmailChange ends every other session, keeps the one that asked, and kills the old address\'s reset link', async (t) => {
  const { post, changeToken, token, tokens, me, refresh, message } = await accountApp(t)
  const asking = await token()
  const other = await tokens()
  const resetResponse = await post('/ForgotPassword', undefined, { email: EMAIL })
  t.equal(resetResponse.statusCode, 202)
  const reset = await message('password_reset', EMAIL)
  const link = await changeToken(asking, NEW_EMAIL)
  t.equal((await post('/VerifyEmailChange', undefined, { token: link })).statusCode, 204)
  t.equal((await me(asking)).statusCode, 200, 'the session that asked goes on')
  t.equal((await me(other.accessToken)).statusCode, 401, 'another session ended')
  t.equal((await refresh(other.refreshToken)).statusCode, 401)
  expectProblem(t, await post('/ResetPassword', undefined, { token: reset.token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD }), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID')
})

t.test('RevertEmailChange gives the owner the account back after the taker changed the address twice and the password (Copenhagen Book)', async (t) => {
  const { post, changeToken, token, login, message, accounts, ada, changePassword, tokens, me } = await accountApp(t)
  // The taker has the password and a session.
  const taker = await token()
  const first = await changeToken(taker, 'taker@example.net')
  t.equal((await post('/VerifyEmailChange', undefined, { token: first })).statusCode, 204)
  const revert = (await message('email_changed', EMAIL)).token!
  t.equal((await changePassword({ email: 'taker@example.net', currentPassword: PASSWORD, newPassword: 'a stolen passphrase, kept', confirmNewPassword: 'a stolen passphrase, kept' })).statusCode, 204)
  const second = await changeToken(await token('taker@example.net', 'a stolen passphrase, kept'), 'taker2@example.net', 'a stolen passphrase, kept')
  t.equal((await post('/VerifyEmailChange', undefined, { token: second })).statusCode, 204)
  const takerSession = await tokens('taker2@example.net', 'a stolen passphrase, kept')

  expectProblem(t, await post('/RevertEmailChange', undefined, { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: 'other' }), 400, 'FST_PWAUTH_PASSWORD_MISMATCH')
  expectProblem(t, await post('/RevertEmailChange', undefined, { token: revert, newPassword: 'short', confirmNewPassword: 'short' }), 400, 'FST_PWAUTH_WEAK_PASSWORD')
  t.equal((await post('/RevertEmailChange', undefined, { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).statusCode, 204)
  t.equal((await accounts.findById(ada.id))!.email, EMAIL, 'the old address is back')
  t.equal((await login(EMAIL, NEW_PASSWORD)).statusCode, 200, 'with the owner\'s new password')
  t.equal((await login('taker2@example.net', 'a stolen passphrase, kept')).statusCode, 401)
  t.equal((await login(EMAIL, 'a stolen passphrase, kept')).statusCode, 401)
  t.equal((await me(takerSession.accessToken)).statusCode, 401, 'the taker\'s sessions ended')
  expectProblem(t, await post('/RevertEmailChange', undefined, { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD }), 400,
    'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'works once')
})

const T1 = 'taker1@example.net'
const T2 = 'taker2@example.net'
const TAKERS_PASSWORD = 'the taker\'s own passphrase'
const revertBody = (token: string, newPassword: string): Record<string, string> => ({ token, newPassword, confirmNewPassword: newPassword })

/** A taker with the password moves the account A → T1 → T2: the owner's revert link went to A, one of the taker's own to T1. */
async function takenTwice (t: Test, app: Awaited<ReturnType<typeof accountApp>>): Promise<{ owners: string, takers: string, taker: string }> {
  const { post, changeToken, token, message } = app
  const taker = await token()
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(taker, T1) })).statusCode, 204)
  const owners = (await message('email_changed', EMAIL)).token!
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(taker, T2) })).statusCode, 204)
  return { owners, takers: (await message('email_changed', T1)).token!, taker }
}

t.test('RevertEmailChange ends every other revert link: a taker who moved the account A → T1 → T2 cannot take it back with T1\'s (revert ping-pong)', async (t) => {
  const app = await accountApp(t)
  const { post, changeToken, login, accounts, ada } = app
  const { owners, takers, taker } = await takenTwice(t, app)
  const pending = await changeToken(taker, 'taker3@example.net')
  expectProblem(t, await post('/RevertEmailChange', undefined, revertBody(takers, TAKERS_PASSWORD)), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID',
    'the taker\'s later link cannot go before the owner\'s')
  t.equal((await accounts.findById(ada.id))!.email, T2, 'and changed nothing')
  t.equal((await login(T2, PASSWORD)).statusCode, 200)

  t.equal((await post('/RevertEmailChange', undefined, revertBody(owners, NEW_PASSWORD))).statusCode, 204, 'the owner\'s link works')
  expectProblem(t, await post('/RevertEmailChange', undefined, revertBody(takers, TAKERS_PASSWORD)), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID',
    'the owner\'s revert ended the taker\'s link')
  expectProblem(t, await post('/VerifyEmailChange', undefined, { token: pending }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'and his pending change')
  t.equal((await accounts.findById(ada.id))!.email, EMAIL, 'the owner keeps the account')
  t.equal((await login(EMAIL, NEW_PASSWORD)).statusCode, 200)
  t.equal((await login(T1, TAKERS_PASSWORD)).statusCode, 401)
})

t.test('RevertEmailChange: of the owner\'s and the taker\'s links used at once (10 times each), exactly one revert succeeds, the owner\'s', async (t) => {
  const app = await accountApp(t)
  const { post, login, accounts, ada } = app
  const { owners, takers } = await takenTwice(t, app)
  // The taker's go first.
  const statuses = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const [token, password] = i % 2 === 1 ? [owners, NEW_PASSWORD] : [takers, TAKERS_PASSWORD]
    return { owner: i % 2 === 1, status: (await post('/RevertEmailChange', undefined, revertBody(token, password))).statusCode }
  }))
  t.same(statuses.filter(({ status }) => status === 204), [{ owner: true, status: 204 }], `one success: ${JSON.stringify(statuses)}`)
  t.equal((await accounts.findById(ada.id))!.email, EMAIL)
  t.equal((await login(EMAIL, NEW_PASSWORD)).statusCode, 200)
  for (const token of [owners, takers]) {
    expectProblem(t, await post('/RevertEmailChange', undefined, revertBody(token, TAKERS_PASSWORD)), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'both links are spent')
  }
})

t.test('RevertEmailChange turns off the two factors a taker enrolled: the owner is back with the new password alone, and may enrol her own', async (t) => {
  const { post, app, changeToken, token, login, message, messages, events, ada } = await accountApp(t, { mfa: { issuer: 'Test', trustDays: 30 } })
  const get = async (url: string, bearer: string) => await app.inject({ url: `/Auth${url}`, headers: { authorization: `Bearer ${bearer}` } })
  // The taker, with the password and a session, sets up two factors with an authenticator of their own.
  const stolen = await token()
  const takerSecret: string = (await post('/Mfa/Setup', stolen)).json().secret
  const enrolled = await post('/Mfa/Confirm', stolen, { code: totpCode(takerSecret, currentStep()), password: PASSWORD })
  t.equal(enrolled.statusCode, 200)
  const takerCodes: string[] = enrolled.json().recoveryCodes
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(stolen, 'taker@example.net') })).statusCode, 204)
  const revert = (await message('email_changed', EMAIL)).token!
  const trusted = await post('/LoginMfa', undefined, { mfaToken: (await login('taker@example.net', PASSWORD)).json().mfaToken, code: takerCodes[0], rememberDevice: true })
  t.equal(trusted.statusCode, 200, 'and a device of theirs trusted for the second factor')
  t.equal((await get('/Sessions/Devices', trusted.json().accessToken)).json().length, 1)

  t.equal((await post('/RevertEmailChange', undefined, { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).statusCode, 204)
  const back = await login(EMAIL, NEW_PASSWORD)
  t.equal(back.statusCode, 200)
  t.type(back.json().accessToken, 'string', 'the new password alone gives tokens')
  t.equal(back.json().mfaToken, undefined, 'no challenge: the taker\'s second factor is gone')
  t.ok(messages.some((m) => m.type === 'mfa_disabled' && m.to === EMAIL), 'the restored address hears two factors went off')
  t.ok(events.some((e) => e.type === 'mfa.disabled' && e.accountId === ada.id))
  t.same((await get('/Sessions/Devices', back.json().accessToken)).json(), [], 'no device of the taker is trusted')

  // The owner enrols her own; the taker's code and recovery codes open nothing.
  const ownerSession = await token(EMAIL, NEW_PASSWORD)
  const ownerSecret: string = (await post('/Mfa/Setup', ownerSession)).json().secret
  const ownerEnrolled = await post('/Mfa/Confirm', ownerSession, { code: totpCode(ownerSecret, currentStep()), password: NEW_PASSWORD })
  t.equal(ownerEnrolled.statusCode, 200, 'the owner can turn two factors on again')
  const challenge = async (): Promise<string> => (await login(EMAIL, NEW_PASSWORD)).json().mfaToken
  expectProblem(t, await post('/LoginMfa', undefined, { mfaToken: await challenge(), code: totpCode(takerSecret, currentStep()) }), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'the taker\'s TOTP code')
  expectProblem(t, await post('/LoginMfa', undefined, { mfaToken: await challenge(), code: takerCodes[1] }), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'a recovery code of the taker')
  t.equal((await post('/LoginMfa', undefined, { mfaToken: await challenge(), code: ownerEnrolled.json().recoveryCodes[0] })).statusCode, 200, 'the owner\'s own')
})

t.test('RevertEmailChange with the second-factor store failing: 503, the link still works, and the retry turns the taker\'s two factors off', async (t) => {
  const mfaStore = new MemoryMfaStore()
  let failing = false
  const disable = mfaStore.disable.bind(mfaStore)
  mfaStore.disable = async (accountId) => { if (failing) throw new Error('mfa store down'); return await disable(accountId) }
  const { post, changeToken, token, login, message, accounts, ada } = await accountApp(t, { mfa: { issuer: 'Test', store: mfaStore } })
  const stolen = await token()
  const takerSecret: string = (await post('/Mfa/Setup', stolen)).json().secret
  t.equal((await post('/Mfa/Confirm', stolen, { code: totpCode(takerSecret, currentStep()), password: PASSWORD })).statusCode, 200)
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(stolen, NEW_EMAIL) })).statusCode, 204)
  const revert = (await message('email_changed', EMAIL)).token!
  const body = { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD }

  failing = true
  expectProblem(t, await post('/RevertEmailChange', undefined, body), 503, 'FST_PWAUTH_UNAVAILABLE')
  t.equal((await accounts.findById(ada.id))!.email, NEW_EMAIL, 'nothing of the account changed yet')
  t.ok((await login(NEW_EMAIL, PASSWORD)).json().mfaToken, 'the taker\'s two factors are still on')
  failing = false
  t.equal((await post('/RevertEmailChange', undefined, body)).statusCode, 204, 'the same link, again')
  const back = await login(EMAIL, NEW_PASSWORD)
  t.equal(back.statusCode, 200)
  t.type(back.json().accessToken, 'string', 'the new password alone: the taker\'s second factor is gone')
})

t.test('RevertEmailChange with the account store failing at the password write: 503, and the link is given back', async (t) => {
  const { post, changeToken, token, login, message, accounts, ada } = await accountApp(t)
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(await token(), NEW_EMAIL) })).statusCode, 204)
  const revert = (await message('email_changed', EMAIL)).token!
  const body = { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD }
  const updatePasswordHash = accounts.updatePasswordHash.bind(accounts)
  accounts.updatePasswordHash = async () => { throw new Error('accounts store down') }
  expectProblem(t, await post('/RevertEmailChange', undefined, body), 503, 'FST_PWAUTH_UNAVAILABLE')
  t.equal((await accounts.findById(ada.id))!.email, EMAIL, 'the address was back before the write failed')
  t.equal((await login(EMAIL, PASSWORD)).statusCode, 200, 'but the password is still the taker\'s')
  accounts.updatePasswordHash = updatePasswordHash
  t.equal((await post('/RevertEmailChange', undefined, body)).statusCode, 204, 'the same link works again')
  t.equal((await login(EMAIL, NEW_PASSWORD)).statusCode, 200)
  t.equal((await login(EMAIL, PASSWORD)).statusCode, 401)
  expectProblem(t, await post('/RevertEmailChange', undefined, body), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'and then it is spent')
})

t.test('RevertEmailChange: an old address another account took meanwhile is not taken from it', async (t) => {
  const { post, changeToken, token, message, accounts, ada } = await accountApp(t)
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(await token(), NEW_EMAIL) })).statusCode, 204)
  const revert = (await message('email_changed', EMAIL)).token!
  const other = accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  expectProblem(t, await post('/RevertEmailChange', undefined, { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID')
  t.equal((await accounts.findById(ada.id))!.email, NEW_EMAIL)
  t.equal((await accounts.findById(other.id))!.email, EMAIL)
  // Refused before anything changed: the link was not spent, and works once the address is free again.
  t.ok(await accounts.delete(other.id))
  t.equal((await post('/RevertEmailChange', undefined, { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).statusCode, 204)
  t.equal((await accounts.findById(ada.id))!.email, EMAIL)
})

t.test('e-mail change needs deliver and a store with updateEmail, and refuses misspelt options', async (t) => {
  const { default: Fastify } = await import('fastify')
  const { authOptions } = await import('../helpers/app.js')
  const { default: passwordAuth } = await import('../../lib/index.js')
  const attempt = async (extra: Record<string, unknown>) => {
    const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
    t.teardown(async () => { await app.close() })
    return await app.register(passwordAuth, { ...await authOptions(), ...extra }).ready().then(() => 'ok', (err: Error) => err.message)
  }
  t.match(await attempt({ account: { emailChange: true } }), /account.emailChange needs deliver/)
  t.match(await attempt({ account: { emailChnage: true } }), /did you mean account.emailChange/)
  t.match(await attempt({ account: { revertTtl: 0 } }), /revertTtl/)
  t.equal(await attempt({ account: { revertTtl: 1, emailChange: true }, deliver: () => {} }), 'ok', 'lifetimes from 1 s')
  const accounts = (await authOptions()).accounts
  const noUpdate = { findByEmail: accounts.findByEmail.bind(accounts), findById: accounts.findById.bind(accounts), updatePasswordHash: accounts.updatePasswordHash.bind(accounts) }
  t.match(await attempt({ accounts: noUpdate, deliver: () => {}, account: { emailChange: true } }), /updateEmail/)
  t.match(await attempt({ accounts: noUpdate, account: { deletion: true } }), /delete\(\)/)
  const { MemoryOneTimeTokenStore } = await import('../../lib/index.js')
  const store = new MemoryOneTimeTokenStore()
  const plain = { put: store.put.bind(store), find: store.find.bind(store), consume: store.consume.bind(store), remove: store.remove.bind(store) }
  t.match(await attempt({ oneTimeTokens: plain, deliver: () => {}, account: { emailChange: true } }), /one-time-token store with consumeFirst\(\) and list\(\)/)
})
