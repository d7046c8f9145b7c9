import { AuthError } from './errors.js'
import type { PasskeyAssertionJSON, PasskeyAttestationJSON, PasskeyCreationOptions, PasskeyRequestOptions } from './types.js'

/** What the client uses of @simplewebauthn/browser (an optional peer dependency). */
export interface WebAuthnBrowser {
  startAuthentication: (options: { optionsJSON: PasskeyRequestOptions, useBrowserAutofill?: boolean }) => Promise<PasskeyAssertionJSON>
  startRegistration: (options: { optionsJSON: PasskeyCreationOptions }) => Promise<PasskeyAttestationJSON>
}

/**
 * @simplewebauthn/browser, loaded the first time a passkey call is made and never before: pages that use no
 * passkey never download it. A bundler splits it off at this import; a page without one maps the name in an
 * import map, or passes a `webauthn` option that loads its own copy.
 */
export function passkeyLoader (load: () => Promise<WebAuthnBrowser> = async () => await import('@simplewebauthn/browser') as unknown as WebAuthnBrowser) {
  let loaded: Promise<WebAuthnBrowser> | undefined
  return async (): Promise<WebAuthnBrowser> => {
    try {
      return await (loaded ??= load())
    } catch (err) {
      loaded = undefined
      throw new AuthError('PASSKEY_UNAVAILABLE', 0, 'Passkeys need @simplewebauthn/browser: install it, map it in an import map, or pass the webauthn option', { cause: err })
    }
  }
}
