import { answerError, problemOf } from './errors.js'
import { passkeyLoader, type WebAuthnBrowser } from './passkeys.js'
import { createKeeper, type EndReason, type Mode } from './session.js'
import { openSharedStore } from './shared-store.js'
import type {
  AccountExport, AddPasskeyRequest, ChangeEmailRequest, ChangePasswordRequest, ConfirmMfaRequest, DeleteAccountRequest, DisableMfaRequest,
  EndOthers, ForgotPasswordRequest, LoginMfaRequest, LoginRequest, MfaChallenge, MfaSetup, MfaStatus, Passkey, PasskeyCreationOptions,
  PasskeyRequestOptions, ReauthenticateRequest, RecoveryCodes, RecoveryCodesRequest, RegisterRequest, ResetPasswordRequest,
  RevertEmailChangeRequest, SessionView, TokenAnswer, TrustedDeviceView, VerifyEmailChangeRequest, VerifyEmailRequest
} from './types.js'
import { createWire } from './wire.js'

export interface AuthClientOptions {
  /**
   * 'cookie' (browsers): the refresh token stays in the plugin's HttpOnly cookie, out of every script's reach.
   * 'token': the refresh token comes in the body, and the client keeps it in the origin's IndexedDB (every tab
   * reads it there, so a reload stays signed in); any script of the origin can read it, so choose cookie mode for browsers.
   */
  mode: Mode
  /** The origin of the API, e.g. 'https://api.example.com'; default: this page's own. */
  baseUrl?: string
  /** The plugin's routes under it: your registration prefix and the plugin's (default '/Auth'), e.g. '/api/Auth'. */
  prefix?: string
  /** Milliseconds to wait for an answer before an AuthError TIMEOUT (default 15000). */
  timeout?: number
  /** Loads @simplewebauthn/browser for the passkey calls (default: `import('@simplewebauthn/browser')`, the first time one is made). */
  webauthn?: () => Promise<WebAuthnBrowser>
  /** The name of the Web Lock, BroadcastChannel and IndexedDB database the tabs share (default from baseUrl and prefix). */
  name?: string
  fetch?: typeof fetch
}

/** What a password sign-in answers: signed in, or the second factor is needed (call loginMfa with its mfaToken). */
export type LoginResult = { mfaRequired: false } | MfaChallenge

type Body = Record<string, unknown> | undefined

export function createAuthClient (options: AuthClientOptions) {
  const { mode, baseUrl = '', prefix = '/Auth', timeout = 15_000, name = `fastify-password-auth:${baseUrl}${prefix}` } = options
  if (mode !== 'cookie' && mode !== 'token') throw new TypeError("createAuthClient: mode must be 'cookie' or 'token'")
  const wire = createWire({ baseUrl, prefix, timeout, fetch: options.fetch ?? globalThis.fetch.bind(globalThis) })
  const store = openSharedStore(name)
  const keeper = createKeeper({ wire, store, mode, name })
  const webauthn = passkeyLoader(options.webauthn)

  /** A route of the plugin; its body as JSON (with this client's device token where `device`). */
  async function post (path: string, body?: Body, { token, device = false }: { token?: string, device?: boolean } = {}): Promise<Response> {
    const deviceToken = device ? await keeper.deviceToken() : undefined
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const payload = body === undefined ? undefined : JSON.stringify(deviceToken === undefined ? body : { ...body, deviceToken })
    return await wire.send(wire.route(path), { method: 'POST', headers, credentials: 'include', body: payload })
  }

  /**
   * Sends with the access token; refreshes first only when it is missing or expired, and again (then sends once
   * more) only when the server calls the token invalid or missing: a wrong password, code or passkey is answered as it came.
   */
  async function authorized (send: (token: string | undefined) => Promise<Response>): Promise<Response> {
    const token = await keeper.token()
    const response = await send(token)
    if (response.status !== 401 || token === undefined) return response
    const code = (await problemOf(response))?.code
    if (code !== 'FST_PWAUTH_TOKEN_INVALID' && code !== 'FST_PWAUTH_TOKEN_MISSING') return response
    const renewed = await keeper.renew(token)
    return renewed === undefined ? response : await send(renewed)
  }

  async function read<T> (response: Response): Promise<T> {
    if (!response.ok) throw await answerError(response)
    return (response.status === 204 || response.status === 202 ? undefined : await response.json()) as T
  }

  const guarded = async <T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: Body, device = false): Promise<T> => await read<T>(await authorized(async (token) =>
    method === 'POST'
      ? await post(path, body, { token, device })
      : await wire.send(wire.route(path), { method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, credentials: 'include' })))

  const open = async <T>(path: string, body?: Body, device = false): Promise<T> => await read<T>(await post(path, body, { device }))

  /** A sign-in's answer: the session starts in every tab. */
  async function signIn (response: Response): Promise<void> {
    await keeper.start(await read<TokenAnswer>(response))
  }

  /** Options from `optionsPath` (a guarded route with `signedIn`), then the browser's passkey ceremony. */
  async function passkeyAssertion (optionsPath: string, { body, useBrowserAutofill = false, signedIn = false }: { body?: Body, useBrowserAutofill?: boolean, signedIn?: boolean }) {
    const { startAuthentication } = await webauthn()
    const optionsJSON = signedIn ? await guarded<PasskeyRequestOptions>('POST', optionsPath) : await open<PasskeyRequestOptions>(optionsPath, body)
    return await startAuthentication({ optionsJSON, useBrowserAutofill })
  }

  const ended = async <T>(result: Promise<T>): Promise<T> => {
    const value = await result
    await keeper.end('logout')
    return value
  }

  return {
    /** Signs in with the password; `{ mfaRequired: true, mfaToken }` when the account's second factor is needed. Sent once, whatever the answer. */
    async login (body: LoginRequest): Promise<LoginResult> {
      const answer = await read<TokenAnswer | MfaChallenge>(await post('Login', body, { device: true }))
      if ('mfaRequired' in answer) return answer
      await keeper.start(answer)
      return { mfaRequired: false }
    },
    /** The second step of a sign-in: the mfaToken and a code (TOTP or recovery code). */
    async loginMfa (body: LoginMfaRequest): Promise<void> { await signIn(await post('LoginMfa', body, { device: true })) },
    /** The second step with one of the account's passkeys instead of a code. */
    async loginMfaWithPasskey ({ mfaToken, rememberDevice }: { mfaToken: string, rememberDevice?: boolean }): Promise<void> {
      const passkey = await passkeyAssertion('LoginMfa/Options', { body: { mfaToken } })
      await signIn(await post('LoginMfa', { mfaToken, passkey, ...rememberDevice === undefined ? {} : { rememberDevice } }, { device: true }))
    },
    /** Signs in with a passkey, no password (`useBrowserAutofill`: from the e-mail field's autofill). */
    async loginWithPasskey ({ useBrowserAutofill = false }: { useBrowserAutofill?: boolean } = {}): Promise<void> {
      const response = await passkeyAssertion('Passkeys/LoginOptions', { useBrowserAutofill })
      await signIn(await post('LoginPasskey', { response }, { device: true }))
    },
    /** Whether a session is live (at page load, in cookie mode, this is one Refresh shared by the tabs). */
    async signedIn (): Promise<boolean> { return await keeper.token() !== undefined },
    /** A live access token, refreshed if it was missing or expired; undefined when signed out. */
    accessToken: keeper.token,
    /** Refreshes now, whatever the token's age (e.g. after a sign-in this client did not make); false when the session is over. */
    async refresh (): Promise<boolean> { return await keeper.renew(undefined, true) !== undefined },
    /** fetch() for your own API: the access token attached, refreshed only when missing or expired (and once after the server calls it invalid). */
    async fetch (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
      return await authorized(async (token) => {
        const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined))
        if (token !== undefined) headers.set('authorization', `Bearer ${token}`)
        return await wire.send(input instanceof Request ? input.clone() : input, { ...init, headers })
      })
    },
    /** Ends the session (in cookie mode also with an expired token: the cookie says which) and signs every tab out. */
    async logout (): Promise<void> {
      const token = mode === 'cookie' ? undefined : await keeper.token()
      const response = await post('Logout', undefined, { token })
      // 401: the session had already ended. Anything else but 204 says nothing: the session may still be live.
      if (response.status !== 204 && response.status !== 401) throw await answerError(response)
      await keeper.end('logout')
    },
    /** Called in every tab when the session ends there: a Logout, or a refused Refresh (expired, ended elsewhere, or a reused refresh token). */
    onSessionEnded (listener: (reason: EndReason) => void): () => void { return keeper.onEnded(listener) },
    /** Called in every tab when a session starts (a sign-in in any tab, or the Refresh at load). */
    onSessionStarted (listener: () => void): () => void { return keeper.onStarted(listener) },

    /** Renews the session's authentication time with the password (and a code, with two factors on). */
    async reauthenticate (body: ReauthenticateRequest): Promise<void> { await guarded('POST', 'Reauthenticate', body, true) },
    /** Renews it with one of the account's passkeys. */
    async reauthenticateWithPasskey (): Promise<void> {
      const passkey = await passkeyAssertion('Passkeys/ReauthOptions', { signedIn: true })
      await guarded('POST', 'Reauthenticate', { passkey })
    },
    /** Ends every session of the account, this one included. */
    async changePassword (body: ChangePasswordRequest): Promise<void> { await ended(open('ChangePassword', body, true)) },
    async register (body: RegisterRequest): Promise<void> { await open('Register', body) },
    async verifyEmail (body: VerifyEmailRequest): Promise<void> { await open('VerifyEmail', body) },
    async forgotPassword (body: ForgotPasswordRequest): Promise<void> { await open('ForgotPassword', body) },
    async resetPassword (body: ResetPasswordRequest): Promise<void> { await open('ResetPassword', body) },

    sessions: {
      list: async (): Promise<SessionView[]> => await guarded('GET', 'Sessions'),
      end: async (id: string): Promise<void> => { await guarded('DELETE', `Sessions/${encodeURIComponent(id)}`) },
      endOthers: async (): Promise<EndOthers> => await guarded('POST', 'Sessions/EndOthers'),
      /** Devices trusted for the second factor. */
      devices: async (): Promise<TrustedDeviceView[]> => await guarded('GET', 'Sessions/Devices'),
      endDevice: async (id: string): Promise<void> => { await guarded('DELETE', `Sessions/Devices/${encodeURIComponent(id)}`) }
    },
    mfa: {
      status: async (): Promise<MfaStatus> => await guarded('GET', 'Mfa'),
      setup: async (): Promise<MfaSetup> => await guarded('POST', 'Mfa/Setup'),
      confirm: async (body: ConfirmMfaRequest): Promise<RecoveryCodes> => await guarded('POST', 'Mfa/Confirm', body, true),
      disable: async (body: DisableMfaRequest): Promise<void> => { await guarded('POST', 'Mfa/Disable', body, true) },
      recoveryCodes: async (body: RecoveryCodesRequest): Promise<RecoveryCodes> => await guarded('POST', 'Mfa/RecoveryCodes', body, true)
    },
    passkeys: {
      list: async (): Promise<Passkey[]> => await guarded('GET', 'Passkeys'),
      /** Creates a passkey in the browser and adds it (with the password, which stands for a recent sign-in). */
      async add (body: AddPasskeyRequest): Promise<Passkey> {
        const { startRegistration } = await webauthn()
        const optionsJSON = await guarded<PasskeyCreationOptions>('POST', 'Passkeys/RegisterOptions')
        const response = await startRegistration({ optionsJSON })
        return await guarded('POST', 'Passkeys', { ...body, response }, true)
      },
      remove: async (id: string): Promise<void> => { await guarded('DELETE', `Passkeys/${encodeURIComponent(id)}`) }
    },
    account: {
      changeEmail: async (body: ChangeEmailRequest): Promise<void> => { await guarded('POST', 'ChangeEmail', body, true) },
      verifyEmailChange: async (body: VerifyEmailChangeRequest): Promise<void> => { await open('VerifyEmailChange', body) },
      revertEmailChange: async (body: RevertEmailChangeRequest): Promise<void> => { await open('RevertEmailChange', body) },
      /** Deletes the account; every tab is signed out. */
      delete: async (body: DeleteAccountRequest): Promise<void> => { await ended(guarded('POST', 'DeleteAccount', body, true)) },
      export: async (): Promise<AccountExport> => await guarded('GET', 'Account/Export')
    }
  }
}

export type AuthClient = ReturnType<typeof createAuthClient>
