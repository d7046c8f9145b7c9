/**
 * Conformance checks for store implementations: run them against your own stores to prove they keep
 * the plugin's promises. Framework-agnostic: each check is a name and an async function that throws an
 * AssertionError on failure.
 *
 * ```ts
 * import { sessionStoreContract } from 'fastify-password-auth/testing'
 * for (const check of sessionStoreContract({ create: async (namespace) => new MyStore(namespace) })) {
 *   test(check.name, check.run)
 * }
 * ```
 */
export type { ContractCheck } from './check.js'
export { accountStoreContract, type AccountStoreHarness, type AccountStoreUnderTest } from './account-store.js'
export { attemptStoreContract, CONTRACT_THROTTLE_POLICY, type AttemptStoreHarness } from './attempt-store.js'
export { CONTRACT_SESSION_POLICY, sessionStoreContract, type SessionStoreHarness } from './session-store.js'
export { oneTimeTokenStoreContract, type OneTimeTokenStoreHarness } from './one-time-token-store.js'
export { mfaStoreContract, type MfaStoreHarness } from './mfa-store.js'
export { passkeyStoreContract, samplePasskey, type PasskeyStoreHarness } from './passkey-store.js'
export { trustedDeviceStoreContract, type TrustedDeviceStoreHarness } from './trusted-device-store.js'
