import type { Test } from 'tap'
import type { PasswordAuthOptions } from '../../lib/index.js'
import { PASSWORD, type TestAppOptions } from './app.js'
import { mfaApp } from './mfa.js'
import { SoftAuthenticator, type Ceremony } from './soft-authenticator.js'

export const RP_ID = 'localhost'
export const ORIGIN = 'http://localhost:3000'
export const PASSKEYS = Object.freeze({ rpId: RP_ID, rpName: 'Example App', origins: [ORIGIN] })

/**
 * An app with passkeys, two factors, the session routes and password reset on (memory stores), whose
 * messages and events the test reads, and the steps of each passkey ceremony as a client makes them.
 */
export async function passkeyApp (t: Test, auth: Partial<PasswordAuthOptions> = {}, options: Omit<TestAppOptions, 'auth'> = {}) {
  const built = await mfaApp(t, { passkeys: PASSKEYS, passwordReset: true, ...auth }, options)
  const { app, post } = built
  const get = async (url: string, token: string) => await app.inject({ method: 'GET', url: `/Auth${url}`, headers: { authorization: `Bearer ${token}` } })

  /** RegisterOptions then POST /Passkeys with `authenticator` and the password (none: `password` null); resolves the second answer. */
  const register = async (token: string, authenticator: SoftAuthenticator, ceremony: Ceremony = {}, name?: string, password: string | null = PASSWORD) => {
    const options = await post('/Passkeys/RegisterOptions', token)
    if (options.statusCode !== 200) return options
    const response = authenticator.create(options.json(), ceremony)
    return await post('/Passkeys', token, { response, ...name === undefined ? {} : { name }, ...password === null ? {} : { password } })
  }
  const loginOptions = async () => (await post('/Passkeys/LoginOptions', undefined)).json()
  /** LoginOptions then LoginPasskey. */
  const signIn = async (authenticator: SoftAuthenticator, ceremony: Ceremony = {}, credential = authenticator.credentials.at(-1)) =>
    await post('/LoginPasskey', undefined, { response: authenticator.get(await loginOptions(), ceremony, credential) })
  /** ReauthOptions then Reauthenticate with the passkey. */
  const stepUp = async (token: string, authenticator: SoftAuthenticator, ceremony: Ceremony = {}) => {
    const options = (await post('/Passkeys/ReauthOptions', token)).json()
    return await post('/Reauthenticate', token, { passkey: authenticator.get(options, ceremony) })
  }
  const authenticator = (synced = false) => new SoftAuthenticator({ origin: ORIGIN, synced })
  return { ...built, get, register, loginOptions, signIn, stepUp, authenticator }
}
