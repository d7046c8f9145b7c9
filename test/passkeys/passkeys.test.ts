import t from 'tap'
import { hashPassword } from '../../lib/index.js'
import { CHEAP_ARGON2, decodeJwt, EMAIL, PASSWORD, PLUGIN_TIMEOUT_MS } from '../helpers/app.js'
import { totpCode } from '../helpers/mfa.js'
import { ORIGIN, PASSKEYS, passkeyApp } from '../helpers/passkeys.js'
import type { SoftAuthenticator } from '../helpers/soft-authenticator.js'

const INVALID = 'FST_PWAUTH_PASSKEY_INVALID'

t.test('register, list, sign in without a password, step up on the same session', async (t) => {
  const { app, token, register, get, signIn, stepUp, messages, authenticator, ada } = await passkeyApp(t)
  const accessToken = await token()
  const key = authenticator()
  const added = await register(accessToken, key, {}, 'Laptop')
  t.equal(added.statusCode, 201, added.body)
  t.match(added.json(), { id: key.credentials[0]!.id, name: 'Laptop', lastUsedAt: null, backedUp: false })
  t.ok(Date.parse(added.json().createdAt))
  t.match(messages.find((m) => m.type === 'passkey_added'), { to: EMAIL, accountId: ada.id })

  const listed = await get('/Passkeys', accessToken)
  t.same(listed.json().map((p: { id: string }) => p.id), [key.credentials[0]!.id])

  const login = await signIn(key)
  t.equal(login.statusCode, 200, login.body)
  const body = login.json()
  t.ok(body.accessToken && body.refreshToken && body.deviceToken)
  t.same(decodeJwt(body.accessToken).payload.amr, ['hwk', 'mfa'], 'a device-bound passkey: hwk')
  t.equal((await app.inject({ method: 'GET', url: '/secure', headers: { authorization: `Bearer ${body.accessToken}` } })).statusCode, 200, 'satisfies requireMfa')
  t.not((await get('/Passkeys', accessToken)).json()[0].lastUsedAt, null)

  const sid = decodeJwt(body.accessToken).payload.sid
  const stepped = await stepUp(body.accessToken, key)
  t.equal(stepped.statusCode, 204, stepped.body)
  const sessions = (await get('/Sessions', body.accessToken)).json()
  t.equal(sessions.length, 2, 'the step-up started no session (the password login and the passkey sign-in)')
  t.ok(sessions.some((s: { id: string, current: boolean }) => s.id === sid && s.current))
})

t.test('a synced passkey signs in with amr swk, and its counter is no hard gate', async (t) => {
  const { token, register, signIn, authenticator, events } = await passkeyApp(t)
  const key = authenticator(true)
  t.equal((await register(await token(), key)).statusCode, 201)
  const first = await signIn(key)
  t.same(decodeJwt(first.json().accessToken).payload.amr, ['swk', 'mfa'])
  t.equal((await signIn(key)).statusCode, 200, 'counter 0 again: accepted')
  t.notOk(events.some((e) => e.type === 'passkey.counter_regressed'), 'zero counters are no regression')
})

t.test('a counter that goes back: refused on a device-bound passkey, accepted with an event on a synced one', async (t) => {
  const { token, register, signIn, authenticator, events } = await passkeyApp(t)
  const bound = authenticator()
  t.equal((await register(await token(), bound)).statusCode, 201)
  t.equal((await signIn(bound, { counter: 7 })).statusCode, 200)
  const regressed = await signIn(bound, { counter: 7 })
  t.equal(regressed.statusCode, 401)
  t.equal(regressed.json().code, INVALID)
  t.match(events.filter((e) => e.type === 'passkey.counter_regressed'), [{ synced: false, storedCounter: 7, receivedCounter: 7 }])
  t.equal((await signIn(bound, { counter: 8 })).statusCode, 200, 'a counter above the stored one is fine')

  const synced = authenticator(true)
  t.equal((await register(await token(), synced)).statusCode, 201)
  t.equal((await signIn(synced, { counter: 5 })).statusCode, 200)
  t.equal((await signIn(synced, { counter: 3 })).statusCode, 200, 'synced: accepted')
  t.match(events.filter((e) => e.type === 'passkey.counter_regressed').at(-1), { synced: true, storedCounter: 5, receivedCounter: 3 })
})

t.test('W3C §7.2: a clone reporting counter 0 after 5 is refused on a device-bound passkey, accepted with the event on a synced one', async (t) => {
  const { token, register, signIn, authenticator, events } = await passkeyApp(t)
  for (const synced of [false, true]) {
    const key = authenticator(synced)
    t.equal((await register(await token(), key)).statusCode, 201)
    t.equal((await signIn(key, { counter: 5 })).statusCode, 200, 'the original reports 5')
    const clone = await signIn(key, { counter: 0 })
    t.equal(clone.statusCode, synced ? 200 : 401, synced ? 'synced: accepted' : 'device-bound: refused')
    t.match(events.filter((e) => e.type === 'passkey.counter_regressed').at(-1), { synced, storedCounter: 5, receivedCounter: 0, passkeyId: key.credentials[0]!.id })
    if (!synced) t.ok(events.some((e) => e.type === 'passkey.failed' && e.reason === 'counter_regressed'))
    t.equal((await signIn(key, { counter: 6 })).statusCode, 200, 'the original goes on: 5 was kept as the stored counter')
    t.equal((await signIn(key, { counter: 0 })).statusCode, synced ? 200 : 401, 'and 0 stays a regression')
  }
})

t.test('every mistake is one 401 PASSKEY_INVALID', async (t) => {
  const { token, register, signIn, loginOptions, post, authenticator, accounts, events } = await passkeyApp(t, { passkeys: { ...PASSKEYS, max: 100 } })
  accounts.add({ email: 'bea@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const beaKey = authenticator()
  t.equal((await register(await token('bea@example.com'), beaKey)).statusCode, 201)

  // Each case with a passkey of its own (a replay or a counter case would spoil a shared one).
  const cases: Array<[string, (key: SoftAuthenticator) => Promise<{ statusCode: number, json: () => any }>]> = [
    ['a wrong origin', async (key) => await signIn(key, { origin: 'https://evil.example' })],
    ['an origin of another port', async (key) => await signIn(key, { origin: 'http://localhost:3001' })],
    ['a wrong rpId', async (key) => await signIn(key, { rpId: 'example.com' })],
    ['user verification off', async (key) => await signIn(key, { uv: false })],
    ['user presence off', async (key) => await signIn(key, { up: false })],
    ['the type of a registration', async (key) => await signIn(key, { type: 'webauthn.create' })],
    ['crossOrigin true', async (key) => await signIn(key, { crossOrigin: true })],
    ['a challenge never issued', async (key) => await signIn(key, { challenge: 'A'.repeat(43) })],
    ['another account\'s user handle', async (key) => await signIn(key, { userHandle: beaKey.credentials[0]!.userHandle })],
    ['no user handle at a sign-in', async (key) => await signIn(key, { userHandle: null })],
    ['an unknown credential', async (key) => await signIn(authenticator(), {}, { ...key.credentials[0]!, id: 'AAAAAAAAAAAAAAAAAAAAAA' })],
    ['a challenge of another purpose (step-up)', async (key) => {
      const options = (await post('/Passkeys/ReauthOptions', await token())).json()
      return await post('/LoginPasskey', undefined, { response: key.get(options) })
    }],
    ['a replayed assertion', async (key) => {
      const response = key.get(await loginOptions())
      const first = await post('/LoginPasskey', undefined, { response })
      t.equal(first.statusCode, 200)
      return await post('/LoginPasskey', undefined, { response })
    }]
  ]
  for (const [name, run] of cases) {
    const key = authenticator()
    t.equal((await register(await token(), key)).statusCode, 201)
    const answer = await run(key)
    t.equal(answer.statusCode, 401, name)
    t.same(answer.json(), {
      type: 'urn:fastify-password-auth:problem:passkey-invalid',
      title: 'Passkey not accepted',
      status: 401,
      detail: 'The passkey response was not accepted. Ask for new options and try again.',
      code: INVALID
    }, `${name}: one body`)
    t.equal((await signIn(key)).statusCode, 200, `${name}: the passkey itself still works`)
  }
  for (const reason of ['user_handle', 'unknown_credential', 'cross_origin', 'challenge', 'verification']) {
    t.ok(events.some((e) => e.type === 'passkey.failed' && e.reason === reason), reason)
  }
})

t.test('LoginOptions reveals nothing: an empty allowCredentials, user verification required', async (t) => {
  const { loginOptions } = await passkeyApp(t)
  const [a, b] = [await loginOptions(), await loginOptions()]
  t.same(Object.keys(a).sort(), ['allowCredentials', 'challenge', 'rpId', 'timeout', 'userVerification'])
  t.same(a.allowCredentials, [])
  t.equal(a.userVerification, 'required')
  t.equal(a.rpId, 'localhost')
  t.equal(Buffer.from(a.challenge, 'base64url').length, 32)
  t.not(a.challenge, b.challenge)
})

t.test('creation options: a random handle made once, the account\'s passkeys excluded, resident key and UV required', async (t) => {
  const { token, post, register, authenticator, ada } = await passkeyApp(t)
  const accessToken = await token()
  const first = (await post('/Passkeys/RegisterOptions', accessToken)).json()
  t.match(first, {
    rp: { id: 'localhost', name: 'Example App' },
    user: { name: EMAIL },
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    attestation: 'none',
    excludeCredentials: []
  })
  t.ok(first.pubKeyCredParams.some((p: { alg: number }) => p.alg === -7) && first.pubKeyCredParams.some((p: { alg: number }) => p.alg === -257))
  const handle = Buffer.from(first.user.id, 'base64url')
  t.ok(handle.length >= 16)
  t.not(handle.toString(), ada.id)
  t.notOk(handle.toString().includes(EMAIL))
  const key = authenticator()
  t.equal((await register(accessToken, key)).statusCode, 201)
  const second = (await post('/Passkeys/RegisterOptions', accessToken)).json()
  t.equal(second.user.id, first.user.id, 'made once')
  t.same(second.excludeCredentials.map((c: { id: string }) => c.id), [key.credentials[0]!.id])
})

t.test('registration refuses: a credential already stored, a challenge of another account, UV off, a wrong origin; 409 past the limit', async (t) => {
  const { token, post, register, authenticator, accounts } = await passkeyApp(t, { passkeys: { rpId: 'localhost', rpName: 'Example App', origins: [ORIGIN], max: 2 } })
  accounts.add({ email: 'bea@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const [ada, bea] = [await token(), await token('bea@example.com')]
  const key = authenticator()
  t.equal((await register(ada, key)).statusCode, 201)

  const refused = async (name: string, answer: { statusCode: number, json: () => any }) => {
    t.equal(answer.statusCode, 400, name)
    t.equal(answer.json().code, INVALID, name)
  }
  // The same credential id again, for another account.
  const options = (await post('/Passkeys/RegisterOptions', bea)).json()
  const again = key.create(options) as { id: string, rawId: string, response: Record<string, unknown> }
  const stolen = key.credentials[0]!.id
  const attestation = Buffer.from(again.response.attestationObject as string, 'base64url')
  const fresh = Buffer.from(again.id, 'base64url')
  attestation.set(Buffer.from(stolen, 'base64url'), attestation.indexOf(fresh))
  await refused('a credential id stored for another account', await post('/Passkeys', bea, { password: PASSWORD, response: { ...again, id: stolen, rawId: stolen, response: { ...again.response, attestationObject: attestation.toString('base64url') } } }))
  const adaOptions = (await post('/Passkeys/RegisterOptions', ada)).json()
  await refused('a challenge issued to another account', await post('/Passkeys', bea, { password: PASSWORD, response: authenticator().create(adaOptions) }))
  await refused('user verification off', await register(ada, authenticator(), { uv: false }))
  await refused('a wrong origin', await register(ada, authenticator(), { origin: 'https://evil.example' }))
  await refused('a wrong rpId', await register(ada, authenticator(), { rpId: 'example.com' }))
  const replayOptions = (await post('/Passkeys/RegisterOptions', ada)).json()
  const replayKey = authenticator()
  t.equal((await post('/Passkeys', ada, { password: PASSWORD, response: replayKey.create(replayOptions) })).statusCode, 201)
  await refused('a used challenge', await post('/Passkeys', ada, { password: PASSWORD, response: authenticator().create(replayOptions) }))
  const limit = await register(ada, authenticator())
  t.equal(limit.statusCode, 409)
  t.equal(limit.json().code, 'FST_PWAUTH_PASSKEY_LIMIT')
})

t.test('enrolment takes the password, which stands for the recent authentication; a fresh token alone enrols nothing', async (t) => {
  const { token, register, authenticator, clock, get, login, events, messages } = await passkeyApp(t)
  // A token taken by script in the page: fresh, but without the password.
  const fresh = await token()
  const stolen = authenticator()
  for (const [name, password] of [['no password', null], ['a wrong password', 'a wrong password of some length']] as const) {
    const refused = await register(fresh, stolen, {}, undefined, password)
    t.equal(refused.statusCode, 401, name)
    t.equal(refused.json().code, 'FST_PWAUTH_INVALID_CREDENTIALS', name)
    t.ok(refused.headers['www-authenticate'], `${name}: Login's 401`)
  }
  t.same((await get('/Passkeys', fresh)).json(), [], 'nothing enrolled')
  t.notOk(messages.some((m) => m.type === 'passkey_added'))
  t.match(events.filter((e) => e.type === 'session.reauthentication_failed'), [{ route: 'Passkeys', reason: 'wrong_password' }, { route: 'Passkeys', reason: 'wrong_password' }])

  // The password is the recent authentication: a session proved long ago needs no Reauthenticate.
  clock.advance(-301_000)
  const stale = await token()
  clock.advance(301_000)
  t.equal((await register(stale, authenticator())).statusCode, 201, 'an old session with the password enrols')

  // Counted on section 6's counters (the success above reset them): after 5 wrong ones the e-mail is blocked, here and at Login.
  for (let i = 0; i < 5; i++) t.equal((await register(fresh, stolen, {}, undefined, 'another wrong password')).statusCode, 401)
  const blocked = await register(fresh, stolen)
  t.equal(blocked.statusCode, 429, 'blocked, the right password too')
  t.ok(Number(blocked.headers['retry-after']) >= 1)
  t.equal((await login()).statusCode, 429, 'the e-mail\'s counter: Login is blocked as well')
})

t.test('enrolment with two factors on needs a session that proved one', async (t) => {
  const { app, post, register, authenticator, enable, challenge, loginMfa, stepUp, ada } = await passkeyApp(t, {}, {
    // A session the host started after its own check of the password: no second factor proved.
    routes: (app) => { app.post('/host-login', async (request, reply) => await app.passwordAuth.sessions.start(ada.id, { request, reply })) }
  })
  const { secret } = await enable()
  const passwordOnly = (await app.inject({ method: 'POST', url: '/host-login' })).json().accessToken
  for (const url of ['/Passkeys/RegisterOptions', '/Passkeys']) {
    const refused = await post(url, passwordOnly, url === '/Passkeys' ? { response: authenticator().create({ challenge: 'AAAA', rp: { id: 'localhost' }, user: { id: 'AAAA' } }), password: PASSWORD } : undefined)
    t.equal(refused.statusCode, 401, url)
    t.equal(refused.json().code, 'FST_PWAUTH_MFA_REQUIRED', url)
  }
  const mfaToken = await challenge()
  const full = (await loginMfa(mfaToken, totpCode(secret, Math.floor(Date.now() / 30_000) + 1))).json().accessToken
  const key = authenticator()
  t.equal((await register(full, key)).statusCode, 201, 'a session that passed the second factor may enrol')
  t.equal((await stepUp(full, key)).statusCode, 204)
})

t.test('remove: the caller\'s own only (404 for another\'s, as for an unknown id), with a message', async (t) => {
  const { app, token, register, authenticator, accounts, messages, signIn } = await passkeyApp(t)
  accounts.add({ email: 'bea@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const [ada, bea] = [await token(), await token('bea@example.com')]
  const key = authenticator()
  t.equal((await register(ada, key, {}, 'Phone')).statusCode, 201)
  const id = key.credentials[0]!.id
  const del = async (tokenOf: string, passkeyId: string) => await app.inject({ method: 'DELETE', url: `/Auth/Passkeys/${passkeyId}`, headers: { authorization: `Bearer ${tokenOf}` } })
  const foreign = await del(bea, id)
  t.equal(foreign.statusCode, 404)
  t.equal(foreign.json().code, 'FST_PWAUTH_PASSKEY_NOT_FOUND')
  t.same(foreign.json(), (await del(bea, 'unknown-id')).json())
  t.equal((await del(ada, id)).statusCode, 204)
  t.match(messages.find((m) => m.type === 'passkey_removed'), { to: EMAIL, passkeyName: 'Phone' })
  t.equal((await signIn(key)).statusCode, 401, 'a removed passkey signs in no more')
})

t.test('failures are counted on no credential and no e-mail: forged assertions naming the owner\'s passkey never block it', async (t) => {
  const { token, register, signIn, authenticator, login, events } = await passkeyApp(t)
  const key = authenticator()
  t.equal((await register(await token(), key)).statusCode, 201)
  const { generateKeyPairSync } = await import('node:crypto')
  // Whoever knows the credential id: assertions over fresh challenges, signed by another key or without user verification.
  const forged = { ...key.credentials[0]!, privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey }
  for (let i = 0; i < 12; i++) {
    const answer = i % 2 === 0 ? await signIn(key, {}, forged) : await signIn(key, { uv: false })
    t.equal(answer.statusCode, 401, `forgery ${i + 1}`)
    t.equal(answer.json().code, 'FST_PWAUTH_PASSKEY_INVALID')
  }
  t.equal(events.filter((e) => e.type === 'passkey.failed' && e.route === 'LoginPasskey').length, 12, 'each failure emits passkey.failed')
  t.equal((await signIn(key)).statusCode, 200, 'the owner\'s passkey still signs in')
  t.equal((await login()).statusCode, 200, 'the e-mail\'s password is not blocked by the passkey\'s failures')

  // An e-mail held blocked by a stranger does not stop the owner's passkey.
  for (let i = 0; i < 12; i++) await login(EMAIL, 'wrong password')
  t.equal((await login()).statusCode, 429, 'the e-mail is blocked')
  t.equal((await signIn(key)).statusCode, 200, 'the passkey still signs in')
})

t.test('of 20 concurrent uses of one assertion, one signs in', async (t) => {
  const { token, register, loginOptions, post, authenticator } = await passkeyApp(t)
  const key = authenticator()
  t.equal((await register(await token(), key)).statusCode, 201)
  const response = key.get(await loginOptions())
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await post('/LoginPasskey', undefined, { response })))
  t.equal(answers.filter((a) => a.statusCode === 200).length, 1)
  t.ok(answers.every((a) => [200, 401].includes(a.statusCode)), 'the others: the one 401')
})

t.test('a passkey as the second factor at LoginMfa; a wrong one counts as a wrong code', async (t) => {
  const { register, authenticator, enable, challenge, post, events, loginMfa } = await passkeyApp(t)
  const key = authenticator()
  const { secret } = await enable()
  const mfaToken = await challenge()
  const full = (await loginMfa(mfaToken, totpCode(secret, Math.floor(Date.now() / 30_000) + 1))).json().accessToken
  t.equal((await register(full, key)).statusCode, 201)

  const next = await challenge()
  const options = (await post('/LoginMfa/Options', undefined, { mfaToken: next })).json()
  t.same(options.allowCredentials.map((c: { id: string }) => c.id), [key.credentials[0]!.id])
  const wrong = await post('/LoginMfa', undefined, { mfaToken: next, passkey: key.get(options, { uv: false }) })
  t.equal(wrong.statusCode, 401)
  t.equal(wrong.json().code, 'FST_PWAUTH_MFA_CODE_INVALID')
  t.ok(events.some((e) => e.type === 'mfa.failed' && e.route === 'LoginMfa'))
  const options2 = (await post('/LoginMfa/Options', undefined, { mfaToken: next })).json()
  const ok = await post('/LoginMfa', undefined, { mfaToken: next, passkey: key.get(options2) })
  t.equal(ok.statusCode, 200, ok.body)
  t.same(decodeJwt(ok.json().accessToken).payload.amr, ['pwd', 'hwk', 'mfa'])
  t.equal((await post('/LoginMfa/Options', undefined, { mfaToken: next })).statusCode, 401, 'the challenge is used up')
  // A sign-in challenge is no second factor's.
  const third = await challenge()
  const login = await post('/LoginMfa', undefined, { mfaToken: third, passkey: key.get((await post('/Passkeys/LoginOptions', undefined)).json()) })
  t.equal(login.statusCode, 401)
})

t.test('ResetPassword removes every passkey, unless keepPasskeys', async (t) => {
  for (const keepPasskeys of [false, true]) {
    const { token, register, authenticator, post, messages, signIn } = await passkeyApp(t, { passwordReset: keepPasskeys ? { keepPasskeys } : true })
    const key = authenticator()
    t.equal((await register(await token(), key)).statusCode, 201)
    t.equal((await post('/ForgotPassword', undefined, { email: EMAIL })).statusCode, 202)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const resetToken = messages.find((m) => m.type === 'password_reset')!.token
    const newPassword = 'another long passphrase for ada'
    const reset = await post('/ResetPassword', undefined, { token: resetToken, newPassword, confirmNewPassword: newPassword })
    t.equal(reset.statusCode, 204, reset.body)
    t.equal((await signIn(key)).statusCode, keepPasskeys ? 200 : 401, keepPasskeys ? 'kept' : 'removed')
  }
})

t.test('Reauthenticate: another account\'s passkey or a sign-in challenge is refused; the password still works', async (t) => {
  const { token, register, authenticator, accounts, post, loginOptions } = await passkeyApp(t)
  accounts.add({ email: 'bea@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const [ada, bea] = [await token(), await token('bea@example.com')]
  const adaKey = authenticator()
  const beaKey = authenticator()
  t.equal((await register(ada, adaKey)).statusCode, 201)
  t.equal((await register(bea, beaKey)).statusCode, 201)
  const options = (await post('/Passkeys/ReauthOptions', ada)).json()
  t.equal((await post('/Reauthenticate', ada, { passkey: beaKey.get(options) })).statusCode, 401, 'another account\'s passkey')
  const beaOptions = (await post('/Passkeys/ReauthOptions', bea)).json()
  t.equal((await post('/Reauthenticate', ada, { passkey: adaKey.get(beaOptions) })).statusCode, 401, 'another account\'s challenge')
  t.equal((await post('/Reauthenticate', ada, { passkey: adaKey.get(await loginOptions()) })).statusCode, 401, 'a sign-in challenge')
  t.equal((await post('/Reauthenticate', ada, { password: PASSWORD })).statusCode, 204)
  const neither = await post('/Reauthenticate', ada, {})
  t.equal(neither.statusCode, 400)
})

t.test('an inactive account\'s passkey signs in no more', async (t) => {
  const { token, register, authenticator, signIn, accounts, ada } = await passkeyApp(t)
  const key = authenticator()
  t.equal((await register(await token(), key)).statusCode, 201)
  accounts.setActive(ada.id, false)
  t.equal((await signIn(key)).statusCode, 401)
})

t.test('a passkey session keeps its amr through refreshes; a step-up records the passkey\'s', async (t) => {
  const { tokens, register, signIn, stepUp, authenticator, refresh } = await passkeyApp(t)
  const { accessToken, refreshToken } = await tokens()
  const key = authenticator(true)
  t.equal((await register(accessToken, key)).statusCode, 201)
  const signedIn = (await signIn(key)).json()
  const refreshed = await refresh(signedIn.refreshToken)
  t.same(decodeJwt(refreshed.json().accessToken).payload.amr, ['swk', 'mfa'])

  t.same(decodeJwt((await refresh(refreshToken)).json().accessToken).payload.amr, ['pwd'], 'a password session')
  const fresh = await tokens()
  t.equal((await stepUp(fresh.accessToken, key)).statusCode, 204)
  t.same(decodeJwt((await refresh(fresh.refreshToken)).json().accessToken).payload.amr, ['swk', 'mfa'], 'after a passkey step-up')
})

t.test('a challenge lives passkeys.ttl seconds', async (t) => {
  const { token, register, loginOptions, post, signIn, authenticator } = await passkeyApp(t, { passkeys: { ...PASSKEYS, ttl: 1 } })
  const key = authenticator()
  t.equal((await register(await token(), key)).statusCode, 201)
  const options = await loginOptions()
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal((await post('/LoginPasskey', undefined, { response: key.get(options) })).statusCode, 401, 'expired')
  t.equal((await signIn(key)).statusCode, 200, 'a fresh one works')
})

t.test('the guide\'s options block works as written: register, sign in, satisfy requireMfa', async (t) => {
  const { docBlock } = await import('../helpers/docs.js')
  const { default: Fastify } = await import('fastify')
  const { default: passwordAuth, authenticated, MemoryAccountStore, MemoryPasskeyStore } = await import('../../lib/index.js')
  const { SECRET } = await import('../helpers/app.js')
  const { SoftAuthenticator } = await import('../helpers/soft-authenticator.js')
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  const accounts = new MemoryAccountStore()
  accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  // The block as written; only the PostgreSQL store is swapped for the memory one.
  // eslint-disable-next-line no-new-func
  const run = new Function('app', 'passwordAuth', 'accounts', 'PostgresPasskeyStore', 'pool', 'process',
    `return (async () => { ${docBlock('example/docs/passkeys.md', 'passkeys-options').replace('process.env.JWT_SECRET!', 'process.env.JWT_SECRET')} })()`)
  await run(app, passwordAuth, accounts, function () { return new MemoryPasskeyStore() }, {}, { env: { JWT_SECRET: SECRET } })
  app.get('/payouts', authenticated({ requireMfa: true }, async (request) => request.account.id))
  const post = async (url: string, token?: string, payload?: object) =>
    await app.inject({ method: 'POST', url, headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, ...payload === undefined ? {} : { payload } })
  const token = (await post('/Auth/Login', undefined, { email: EMAIL, password: PASSWORD })).json().accessToken
  const key = new SoftAuthenticator({ origin: 'https://app.example.com' })
  const options = (await post('/Auth/Passkeys/RegisterOptions', token)).json()
  t.equal(options.rp.id, 'example.com')
  t.equal((await post('/Auth/Passkeys', token, { response: key.create(options), password: PASSWORD })).statusCode, 201)
  t.equal((await app.inject({ url: '/payouts', headers: { authorization: `Bearer ${token}` } })).statusCode, 401, 'a password session: no second factor')
  const signedIn = await post('/Auth/LoginPasskey', undefined, { response: key.get((await post('/Auth/Passkeys/LoginOptions')).json()) })
  t.equal(signedIn.statusCode, 200)
  t.equal((await app.inject({ url: '/payouts', headers: { authorization: `Bearer ${signedIn.json().accessToken}` } })).statusCode, 200, 'a passkey session satisfies requireMfa')
  const foreign = new SoftAuthenticator({ origin: 'https://example.org' })
  foreign.credentials.push(key.credentials[0]!)
  t.equal((await post('/Auth/LoginPasskey', undefined, { response: foreign.get((await post('/Auth/Passkeys/LoginOptions')).json()) })).statusCode, 401, 'an origin not listed')
})

t.test('an unknown credential and a known one are refused in the same time (the unknown one is checked against a decoy key)', async (t) => {
  const { token, register, post, loginOptions, authenticator } = await passkeyApp(t)
  const known = authenticator()
  t.equal((await register(await token(), known)).statusCode, 201)
  const stranger = authenticator()
  const unknownKey = { ...known.credentials[0]!, id: 'BBBBBBBBBBBBBBBBBBBBBB' }
  // A signature made by another key: verification runs, and fails, for both.
  const forged = { privateKey: (await import('node:crypto')).generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey }
  const timeOf = async (response: Record<string, unknown>): Promise<number> => {
    const start = process.hrtime.bigint()
    const answer = await post('/LoginPasskey', undefined, { response })
    t.equal(answer.statusCode, 401)
    return Number(process.hrtime.bigint() - start) / 1e6
  }
  const knownTimes: number[] = []
  const unknownTimes: number[] = []
  // No credential is counted: one known credential takes every forged attempt.
  const bad = { ...known.credentials[0]!, privateKey: forged.privateKey }
  for (let i = 0; i < 16; i++) {
    unknownTimes.push(await timeOf(stranger.get(await loginOptions(), {}, { ...unknownKey, id: `${'C'.repeat(21)}${'ABCDEFGHIJKLMNOP'[i]}` })))
    knownTimes.push(await timeOf(known.get(await loginOptions(), {}, bad)))
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!
  const [k, u] = [median(knownTimes.slice(2)), median(unknownTimes.slice(2))]
  t.ok(Math.abs(k - u) < Math.max(k, u) * 0.35 + 1, `known ${k.toFixed(2)} ms, unknown ${u.toFixed(2)} ms`)
})

t.test('a clientDataJSON that is not JSON, or not an object, is refused; a store failure answers 503 and counts nothing', async (t) => {
  const { MemoryPasskeyStore } = await import('../../lib/index.js')
  const store = new MemoryPasskeyStore()
  let failing = false
  const flaky = new Proxy(store, {
    get (target, name) {
      const value = Reflect.get(target, name)
      return typeof value === 'function' ? async (...args: unknown[]) => { if (failing && name === 'get') throw new Error('store down'); return await value.apply(target, args) } : value
    }
  })
  const { token, register, loginOptions, post, authenticator, signIn } = await passkeyApp(t, { passkeys: { ...PASSKEYS, store: flaky } })
  const key = authenticator()
  t.equal((await register(await token(), key)).statusCode, 201)
  for (const clientDataJSON of [Buffer.from('not json').toString('base64url'), Buffer.from('42').toString('base64url'), Buffer.from('{"challenge":7}').toString('base64url')]) {
    const response = key.get(await loginOptions()) as { response: Record<string, unknown> }
    const answer = await post('/LoginPasskey', undefined, { response: { ...response, response: { ...response.response, clientDataJSON } } })
    t.equal(answer.statusCode, 401, clientDataJSON)
  }
  failing = true
  for (let i = 0; i < 6; i++) {
    const down = await signIn(key)
    t.equal(down.statusCode, 503)
    t.equal(down.json().code, 'FST_PWAUTH_UNAVAILABLE')
  }
  failing = false
  t.equal((await signIn(key)).statusCode, 200, 'the failures of the outage were not counted against the passkey')
})

t.test('POST /Passkeys runs argon2, so it counts against Login\'s per-IP limit (one budget, not one of its own)', async (t) => {
  const { token, register, authenticator, login, post } = await passkeyApp(t, { rateLimit: { max: 5, timeWindow: 60_000 } })
  const accessToken = await token() // 1
  // RegisterOptions counts too: one budget per client for every limited route (it had one of its own on memory).
  t.equal((await register(accessToken, authenticator(), {}, undefined, 'a wrong password of some length')).statusCode, 401) // 2, 3
  t.equal((await register(accessToken, authenticator())).statusCode, 201) // 4, 5
  const limited = await login()
  t.equal(limited.statusCode, 429, 'Login finds the budget spent')
  t.equal(limited.json().code, 'FST_PWAUTH_TOO_MANY_ATTEMPTS')
  t.equal((await post('/Passkeys', accessToken, { response: {}, password: PASSWORD })).statusCode, 429, 'and so does POST /Passkeys')
})
