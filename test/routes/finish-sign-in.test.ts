import t from 'tap'
import type { AuthEvent } from '../../lib/index.js'
import { EMAIL, PASSWORD } from '../helpers/app.js'
import { totpCode } from '../helpers/mfa.js'
import { passkeyApp } from '../helpers/passkeys.js'

// Contract §3, §15, §18, §21: every sign-in (Login, LoginMfa, LoginPasskey, a trusted device) starts one session and
// emits one login.succeeded saying what was proved; one without a live device token of the account tells the owner.

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))
const ROUTINE = new Set(['type', 'accountId', 'email', 'sessionId', 'time', 'requestId', 'ip'])

t.test('each sign-in emits login.succeeded once, with its flags, and new_device_login once for a new device', async (t) => {
  const { app, post, enable, challenge, register, loginOptions, authenticator, events, messages, ada } = await passkeyApp(t, { mfa: { issuer: 'Example App', trustDays: 30 } })

  /** The sign-in's own events and notices: the flags of its one login.succeeded, its session.started count, new_device_login count. */
  const signIn = async (run: () => Promise<{ statusCode: number, body: string, json: () => any }>) => {
    const [fromEvent, fromMessage] = [events.length, messages.length]
    const answer = await run()
    t.equal(answer.statusCode, 200, 'signed in')
    await sleep(20)
    const own: AuthEvent[] = events.slice(fromEvent)
    const succeeded = own.filter((event) => event.type === 'login.succeeded')
    t.equal(succeeded.length, 1, 'one login.succeeded')
    t.match(succeeded[0], { accountId: ada.id, email: EMAIL, sessionId: String })
    return {
      body: answer.json(),
      flags: Object.fromEntries(Object.entries(succeeded[0] ?? {}).filter(([key]) => !ROUTINE.has(key))),
      started: own.filter((event) => event.type === 'session.started').length,
      notices: messages.slice(fromMessage).filter((message) => message.type === 'new_device_login').length
    }
  }
  const login = async (deviceToken?: string) => await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD, ...deviceToken === undefined ? {} : { deviceToken } } })

  const password = await signIn(async () => await login())
  t.same(password.flags, { newDevice: true }, 'Login')
  t.same([password.started, password.notices], [1, 1])
  const known = await signIn(async () => await login(password.body.deviceToken))
  t.same(known.flags, {}, 'Login with its device token')
  t.same([known.started, known.notices], [1, 0])

  const { secret } = await enable()
  const key = authenticator()
  let step = Math.floor(Date.now() / 30_000)
  const withCode = await signIn(async () => await post('/LoginMfa', undefined, { mfaToken: await challenge(), code: totpCode(secret, ++step), rememberDevice: true }))
  t.same(withCode.flags, { mfa: true, newDevice: true }, 'LoginMfa')
  t.same([withCode.started, withCode.notices], [1, 1])
  t.equal((await register(withCode.body.accessToken, key)).statusCode, 201)

  const trusted = await signIn(async () => await login(withCode.body.deviceToken))
  t.same(trusted.flags, { mfa: true, trustedDevice: true }, 'Login from a device trusted for the second factor')
  t.same([trusted.started, trusted.notices], [1, 0])

  const mfaToken = await challenge()
  const options = (await post('/LoginMfa/Options', undefined, { mfaToken })).json()
  const withPasskey = await signIn(async () => await post('/LoginMfa', undefined, { mfaToken, passkey: key.get(options), deviceToken: withCode.body.deviceToken }))
  t.same(withPasskey.flags, { mfa: true }, 'LoginMfa with a passkey for the code, from a known device')
  t.same([withPasskey.started, withPasskey.notices], [1, 0])

  const passkey = await signIn(async () => await post('/LoginPasskey', undefined, { response: key.get(await loginOptions()) }))
  t.same(passkey.flags, { mfa: true, passkey: true, newDevice: true }, 'LoginPasskey')
  t.same([passkey.started, passkey.notices], [1, 1])
  const passkeyKnown = await signIn(async () => await post('/LoginPasskey', undefined, { response: key.get(await loginOptions()), deviceToken: passkey.body.deviceToken }))
  t.same(passkeyKnown.flags, { mfa: true, passkey: true }, 'LoginPasskey with its device token')
  t.same([passkeyKnown.started, passkeyKnown.notices], [1, 0])
})
