import t from 'tap'
import { EMAIL, PASSWORD } from '../helpers/app.js'
import { currentStep, mfaApp, totpCode } from '../helpers/mfa.js'
import { expectProblem } from '../helpers/problem.js'
import { interleaveLoginWithSwitch } from '../helpers/mfa-race.js'

// Issue 29, items 4 and 8: Confirm and Disable take the password, which stands for the recent authentication
// (contract §15); switching two factors refuses every other session, a racing Login's included.

t.test('Confirm and Disable take the password: a wrong or missing one is Login\'s 401, counted on Login\'s counters', async (t) => {
  const { post, token, login, events } = await mfaApp(t)
  const accessToken = await token()
  const { secret } = (await post('/Mfa/Setup', accessToken)).json()
  const code = totpCode(secret)
  expectProblem(t, await post('/Mfa/Confirm', accessToken, { code }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'no password: a stolen token alone enrols nothing')
  for (let i = 0; i < 4; i++) expectProblem(t, await post('/Mfa/Confirm', accessToken, { code, password: `not the password ${i}` }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS')
  expectProblem(t, await post('/Mfa/Confirm', accessToken, { code, password: PASSWORD }), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'the e-mail\'s counter: 5 failures, then blocked')
  expectProblem(t, await login(), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'the same counter as Login')
  t.match(events.filter((event) => event.type === 'session.reauthentication_failed'), Array(5).fill({ route: 'Mfa/Confirm', reason: 'wrong_password' }))
})

t.test('a known device is judged on its own counter at Confirm and Disable too; the code is checked after the password', async (t) => {
  const { post, tokens, app } = await mfaApp(t)
  const { accessToken, deviceToken } = await tokens() as unknown as { accessToken: string, deviceToken: string }
  const { secret } = (await post('/Mfa/Setup', accessToken)).json()
  // Strangers block the e-mail.
  for (let i = 0; i < 6; i++) await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: `a stranger's guess ${i}` } })
  expectProblem(t, await post('/Mfa/Confirm', accessToken, { code: totpCode(secret), password: PASSWORD }), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'without the device token')
  const step = currentStep()
  expectProblem(t, await post('/Mfa/Confirm', accessToken, { code: totpCode(secret, step), password: 'a wrong password', deviceToken }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS')
  const confirmed = await post('/Mfa/Confirm', accessToken, { code: totpCode(secret, step), password: PASSWORD, deviceToken })
  t.equal(confirmed.statusCode, 200, 'on the device\'s counter; and the code was not spent by the refused password')
  const { recoveryCodes } = confirmed.json()
  expectProblem(t, await post('/Mfa/Disable', accessToken, { code: recoveryCodes[0], password: PASSWORD }), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'Disable without the device token')
  t.equal((await post('/Mfa/Disable', accessToken, { code: recoveryCodes[0], password: PASSWORD, deviceToken })).statusCode, 204)
})

t.test('the state comes first: Disable while off and Confirm without a Setup are 409, whatever the code and the password', async (t) => {
  const { post, token, enable } = await mfaApp(t)
  const accessToken = await token()
  for (const body of [{}, { code: '123456' }, { code: '123456', password: 'wrong' }, { code: '123456', password: PASSWORD }]) {
    expectProblem(t, await post('/Mfa/Disable', accessToken, body), body.code === undefined ? 400 : 409, body.code === undefined ? 'FST_PWAUTH_VALIDATION' : 'FST_PWAUTH_MFA_STATE', `Disable while off ${JSON.stringify(body)}`)
    if (body.code !== undefined) expectProblem(t, await post('/Mfa/Confirm', accessToken, body), 409, 'FST_PWAUTH_MFA_STATE', `Confirm without a Setup ${JSON.stringify(body)}`)
  }
  const { accessToken: on, secret } = await enable()
  expectProblem(t, await post('/Mfa/Confirm', on, { code: totpCode(secret, currentStep() + 1), password: 'wrong' }), 409, 'FST_PWAUTH_MFA_STATE', 'Confirm while on')
})

// Issue 37, item 2: RecoveryCodes takes the password as Disable does, and checks the state before anything else.

t.test('RecoveryCodes while two factors are off (or only set up): 409 before the code or the password is looked at', async (t) => {
  const { post, token, login, events } = await mfaApp(t)
  const accessToken = await token()
  for (const state of ['off', 'pending']) {
    if (state === 'pending') t.equal((await post('/Mfa/Setup', accessToken)).statusCode, 200)
    for (const body of [{ code: '123456' }, { code: '123456', password: 'wrong' }, { code: '123456', password: PASSWORD }, { code: 'not a code', password: 'wrong again' }]) {
      const refused = expectProblem(t, await post('/Mfa/RecoveryCodes', accessToken, body), 409, 'FST_PWAUTH_MFA_STATE', `${state}: ${JSON.stringify(body)}`)
      t.equal(refused.detail, 'Two factors are not on.', 'the detail says which state')
    }
  }
  t.equal((await login()).statusCode, 200, 'no wrong password was counted: Login is not blocked')
  t.same(events.filter((event) => event.type === 'mfa.failed' || event.type === 'session.reauthentication_failed'), [], 'nothing was checked')
})

t.test('RecoveryCodes takes the password: on an old session, with the code the phone shows, no Reauthenticate', async (t) => {
  const { post, enable, clock, loginMfa, challenge } = await mfaApp(t, { reauthMaxAge: 60 })
  // Two factors turned on ten minutes ago on the session store's clock: the session is older than reauthMaxAge.
  clock.advance(-10 * 60_000)
  const { accessToken, secret, step, recoveryCodes } = await enable()
  clock.advance(10 * 60_000)
  expectProblem(t, await post('/Sessions/EndOthers', accessToken), 401, 'FST_PWAUTH_REAUTHENTICATION_REQUIRED', 'the session is old')
  const replaced = await post('/Mfa/RecoveryCodes', accessToken, { code: totpCode(secret, step + 1), password: PASSWORD })
  t.equal(replaced.statusCode, 200, 'one code, one screen: the password stands for the recent authentication')
  const fresh: string[] = replaced.json().recoveryCodes
  t.equal(fresh.length, 10)
  expectProblem(t, await loginMfa(await challenge(), recoveryCodes[0]), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'the old codes stopped working')
  t.equal((await loginMfa(await challenge(), fresh[0])).statusCode, 200)
})

t.test('RecoveryCodes: a wrong or missing password is Login\'s 401, counted on Login\'s counters, and the code is not looked at', async (t) => {
  const { post, enable, login, events } = await mfaApp(t)
  const { accessToken, secret, step } = await enable()
  const code = totpCode(secret, step + 1)
  expectProblem(t, await post('/Mfa/RecoveryCodes', accessToken, { code }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'no password: a token taken by script reads no codes')
  for (let i = 0; i < 4; i++) expectProblem(t, await post('/Mfa/RecoveryCodes', accessToken, { code, password: `not the password ${i}` }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS')
  expectProblem(t, await post('/Mfa/RecoveryCodes', accessToken, { code, password: PASSWORD }), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'the e-mail\'s counter: 5 failures, then blocked')
  expectProblem(t, await login(), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'the same counter as Login')
  t.match(events.filter((event) => event.type === 'session.reauthentication_failed'), Array(5).fill({ route: 'Mfa/RecoveryCodes', reason: 'wrong_password' }))
  t.same(events.filter((event) => event.type === 'mfa.failed'), [], 'no code was checked')
})

t.test('RecoveryCodes runs argon2: it shares Login\'s per-IP limit', async (t) => {
  const { post, enable, app } = await mfaApp(t, { rateLimit: { max: 4, timeWindow: 60_000 } })
  const { accessToken, secret, step } = await enable() // Login and Confirm: 2
  const replace = async (code: string) => await post('/Mfa/RecoveryCodes', accessToken, { code, password: PASSWORD })
  t.equal((await replace(totpCode(secret, step + 1))).statusCode, 200) // 3
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: 'a wrong password' } })).statusCode, 401) // 4
  expectProblem(t, await replace(totpCode(secret, step + 2)), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'the budget Login and Confirm spent')
})

t.test('the 409 says which state: already on, no set-up waiting, not on', async (t) => {
  const { post, token, enable } = await mfaApp(t)
  const accessToken = await token()
  const detail = async (url: string, body?: Record<string, unknown>, access = accessToken) => expectProblem(t, await post(url, access, body), 409, 'FST_PWAUTH_MFA_STATE', url).detail
  t.match(await detail('/Mfa/Confirm', { code: '123456', password: PASSWORD }), /no set-up waiting/, 'Confirm without a Setup')
  t.equal(await detail('/Mfa/Disable', { code: '123456', password: PASSWORD }), 'Two factors are not on.', 'Disable while off')
  const { accessToken: on, secret } = await enable()
  t.match(await detail('/Mfa/Setup', undefined, on), /already on/, 'Setup while on')
  t.match(await detail('/Mfa/Confirm', { code: totpCode(secret, currentStep() + 1), password: PASSWORD }, on), /already on/, 'Confirm while on')
})

t.test('one phone through every screen on an old session: Setup, Confirm and Disable, each with the code the phone shows, no Reauthenticate', async (t) => {
  const { post, token, clock, me } = await mfaApp(t, { reauthMaxAge: 60 })
  // Signed in ten minutes ago on the session store's clock: older than reauthMaxAge.
  clock.advance(-10 * 60_000)
  const accessToken = await token()
  clock.advance(10 * 60_000)
  expectProblem(t, await post('/Sessions/EndOthers', accessToken), 401, 'FST_PWAUTH_REAUTHENTICATION_REQUIRED', 'the session is old')
  const { secret } = (await post('/Mfa/Setup', accessToken)).json()
  t.type(secret, 'string', 'Setup changes nothing until Confirm: no recent authentication needed')
  const step = currentStep()
  const confirmed = await post('/Mfa/Confirm', accessToken, { code: totpCode(secret, step), password: PASSWORD })
  t.equal(confirmed.statusCode, 200, 'Confirm with the code the phone shows and the password')
  const disabled = await post('/Mfa/Disable', accessToken, { code: totpCode(secret, step + 1), password: PASSWORD })
  t.equal(disabled.statusCode, 204, 'Disable on the old session, with the phone\'s next code: no Reauthenticate spent it first')
  t.equal((await me(accessToken)).statusCode, 200)
})

t.test('mfa: true without the session routes: set-up works on a session of any age', async (t) => {
  const { post, token, clock } = await mfaApp(t, { sessionRoutes: false })
  clock.advance(-3_600_000)
  const accessToken = await token()
  clock.advance(3_600_000)
  const setup = await post('/Mfa/Setup', accessToken)
  t.equal(setup.statusCode, 200)
  t.equal((await post('/Mfa/Confirm', accessToken, { code: totpCode(setup.json().secret), password: PASSWORD })).statusCode, 200)
})

t.test('a Login racing Confirm: its session, created after Confirm ended the others, is ended too and it answers the challenge', async (t) => {
  const { login, me, sessions, ada, switchedBy } = await interleaveLoginWithSwitch(t, 'confirm')
  t.equal(login.statusCode, 200)
  t.same(Object.keys(login.json()).sort(), ['mfaExpiresIn', 'mfaRequired', 'mfaToken'], 'the racing Login answers only the challenge')
  t.same((await sessions.list(ada.id)).map((session) => session.id), [switchedBy], 'no session but the one that turned two factors on')
  t.equal(me, undefined, 'no access token came out of it')
})

t.test('a LoginMfa racing Disable: its session is ended too', async (t) => {
  const { login, sessions, ada, switchedBy } = await interleaveLoginWithSwitch(t, 'disable')
  expectProblem(t, login, 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'the racing LoginMfa')
  t.same((await sessions.list(ada.id)).map((session) => session.id), [switchedBy], 'no session but the one that turned two factors off')
})
