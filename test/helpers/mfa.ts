import { generateSync } from 'otplib'
import type { Test } from 'tap'
import type { AuthEvent, PasswordAuthOptions } from '../../lib/index.js'
import type { PasswordAuthMessage } from '../../lib/messages/outbox.js'
import { buildTestApp, EMAIL, PASSWORD, type TestAppOptions } from './app.js'
import { authenticated } from '../../lib/index.js'

/** The TOTP time step of now, as the server counts it. */
export const currentStep = (): number => Math.floor(Date.now() / 30_000)

/** The code an authenticator app shows for `secret` at time step `step` (default now). */
export function totpCode (secret: string, step = currentStep()): string {
  return generateSync({ secret, epoch: step * 30 })
}

/**
 * An app with two factors and the session routes on, whose messages and events the test reads; GET
 * /secure demands a second factor. `enable()` logs ada in, sets two factors up and turns them on.
 */
export async function mfaApp (t: Test, auth: Partial<PasswordAuthOptions> = {}, options: Omit<TestAppOptions, 'auth'> = {}) {
  const messages: PasswordAuthMessage[] = []
  const events: AuthEvent[] = []
  const built = await buildTestApp(t, {
    ...options,
    auth: { mfa: { issuer: 'Example App' }, sessionRoutes: true, deliver: (message) => { messages.push(message) }, onEvent: (event) => { events.push(event) }, ...auth },
    routes: (app) => {
      app.get('/secure', authenticated({ requireMfa: true }, async (request) => ({ id: request.account.id })))
      options.routes?.(app)
    }
  })
  const { app } = built
  const post = async (url: string, token: string | undefined, payload?: Record<string, unknown>) =>
    await app.inject({ method: 'POST', url: `/Auth${url}`, headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, ...payload === undefined ? {} : { payload } })
  const loginMfa = async (mfaToken: unknown, code: unknown) => await post('/LoginMfa', undefined, { mfaToken, code })
  /** Logs in with the password; resolves the challenge of an account with two factors on. */
  const challenge = async (email = EMAIL, password = PASSWORD): Promise<string> => {
    const response = await built.login(email, password)
    if (response.statusCode !== 200 || response.json().mfaToken === undefined) throw new Error(`no challenge: ${response.statusCode} ${response.body}`)
    return response.json().mfaToken
  }
  /** Turns two factors on for ada: resolves her secret, recovery codes, the step the confirm code used and the session's access token. */
  const enable = async () => {
    const accessToken = await built.token()
    const setup = await post('/Mfa/Setup', accessToken)
    if (setup.statusCode !== 200) throw new Error(`setup failed: ${setup.statusCode} ${setup.body}`)
    const { secret } = setup.json()
    const step = currentStep()
    const confirm = await post('/Mfa/Confirm', accessToken, { code: totpCode(secret, step), password: PASSWORD })
    if (confirm.statusCode !== 200) throw new Error(`confirm failed: ${confirm.statusCode} ${confirm.body}`)
    return { secret: secret as string, recoveryCodes: confirm.json().recoveryCodes as string[], step, accessToken }
  }
  return { ...built, messages, events, post, loginMfa, challenge, enable }
}
