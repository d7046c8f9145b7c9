import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { PASSKEYS } from '../helpers/passkeys.js'
import { mfaApp } from '../helpers/mfa.js'

/** Every route the per-IP limit counts, as the README lists them. */
const LIMITED = [
  'POST /Auth/Login', 'POST /Auth/LoginMfa', 'POST /Auth/LoginMfa/Options', 'POST /Auth/LoginPasskey', 'POST /Auth/Passkeys/LoginOptions',
  'POST /Auth/Register', 'POST /Auth/VerifyEmail', 'POST /Auth/ForgotPassword', 'POST /Auth/ResetPassword',
  'POST /Auth/ChangePassword', 'POST /Auth/Reauthenticate', 'POST /Auth/Mfa/Confirm', 'POST /Auth/Mfa/Disable', 'POST /Auth/Mfa/RecoveryCodes',
  'POST /Auth/Passkeys', 'POST /Auth/Passkeys/RegisterOptions', 'POST /Auth/Passkeys/ReauthOptions', 'GET /Auth/Passkeys', 'DELETE /Auth/Passkeys/:id',
  'POST /Auth/ChangeEmail', 'POST /Auth/VerifyEmailChange', 'POST /Auth/RevertEmailChange', 'POST /Auth/DeleteAccount'
]

/** Every other route of the plugin: no per-IP count. */
const UNLIMITED = [
  'POST /Auth/Refresh', 'POST /Auth/Logout', 'GET /Auth/Sessions', 'DELETE /Auth/Sessions/:id', 'POST /Auth/Sessions/EndOthers',
  'POST /Auth/Mfa/Setup', 'GET /Auth/Mfa', 'GET /Auth/Account/Export', 'GET /Auth/Sessions/Devices', 'DELETE /Auth/Sessions/Devices/:id'
]

t.test('with every feature on, the per-IP limit counts exactly the listed routes', async (t) => {
  const seen: string[] = []
  const collect = (app: FastifyInstance): void => {
    app.addHook('onRoute', ({ method, url }) => { for (const one of [method].flat()) if (one !== 'HEAD' && url.startsWith('/Auth/')) seen.push(`${one} ${url}`) })
  }
  // max 0: the first request a route counts is over the limit.
  const { app, ada } = await mfaApp(t, {
    rateLimit: { max: 0 },
    passkeys: PASSKEYS,
    passwordReset: true,
    registration: true,
    mfa: { issuer: 'Example App', trustDays: 30 },
    account: { emailChange: true, deletion: true, export: true }
  }, { before: collect })
  t.same([...seen].sort(), [...LIMITED, ...UNLIMITED].sort(), 'the lists name every route of the plugin')
  const started = await app.passwordAuth.sessions.start(ada.id, { request: { log: app.log, ip: '10.0.0.2', headers: {} } as never, reply: { header: () => {} } as never })
  const authorization = `Bearer ${started!.accessToken}`
  for (const route of [...LIMITED, ...UNLIMITED]) {
    const [method, url] = route.split(' ') as ['GET' | 'POST' | 'DELETE', string]
    const response = await app.inject({ method, url: url.replace(':id', 'x'), headers: { authorization }, remoteAddress: '10.0.0.1', ...method === 'POST' ? { payload: {} } : {} })
    if (LIMITED.includes(route)) t.equal(response.statusCode, 429, `${route} is counted`)
    else t.not(response.statusCode, 429, `${route} is not counted`)
  }
})

t.test('one budget per client across the limited routes, whichever journey they belong to', async (t) => {
  const { app } = await mfaApp(t, { rateLimit: { max: 3, timeWindow: 60_000 }, passkeys: PASSKEYS, account: { emailChange: true } })
  const post = async (url: string, payload: object, remoteAddress = '10.0.0.3') => await app.inject({ method: 'POST', url: `/Auth${url}`, payload, remoteAddress })
  t.equal((await post('/Login', { email: 'nobody@example.com', password: 'x' })).statusCode, 401) // 1
  t.equal((await post('/LoginMfa', { mfaToken: 'x', code: '123456' })).statusCode, 401) // 2
  t.equal((await post('/Passkeys/LoginOptions', {})).statusCode, 200) // 3
  for (const [url, payload] of [['/VerifyEmailChange', { token: 'x' }], ['/LoginMfa', { mfaToken: 'x', code: '123456' }], ['/Login', { email: 'nobody@example.com', password: 'x' }]] as const) {
    t.equal((await post(url, payload)).statusCode, 429, `${url} finds the budget spent`)
  }
  t.equal((await post('/Login', { email: 'nobody@example.com', password: 'x' }, '10.0.0.4')).statusCode, 401, 'another client has its own')
})
