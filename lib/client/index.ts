// fastify-password-auth/client: the browser side of the plugin's routes (ES modules, no runtime dependency;
// passkeys load @simplewebauthn/browser on first use). Nothing here imports the server: types only.
export { createAuthClient, type AuthClient, type AuthClientOptions, type LoginResult } from './client.js'
export { AuthError, type ClientFailure } from './errors.js'
export type { WebAuthnBrowser } from './passkeys.js'
export type { EndReason, Mode } from './session.js'
export type * from './types.js'
