import { MemoryAccountStore, MemoryAttemptStore, MemoryMfaStore, MemoryOneTimeTokenStore, MemoryPasskeyStore, MemorySessionStore, MemoryTrustedDeviceStore } from '../../lib/index.js'
import type { ServerStores } from './types.js'

/** Everything in process memory: one instance only. */
export function memoryStores (): ServerStores {
  const accounts = new MemoryAccountStore()
  return {
    accounts,
    sessions: new MemorySessionStore(),
    // Shared by the API's registration and the browser app's, as one instance's state should be.
    attempts: new MemoryAttemptStore(),
    oneTimeTokens: new MemoryOneTimeTokenStore(),
    mfa: new MemoryMfaStore(),
    passkeys: new MemoryPasskeyStore(),
    trustedDevices: new MemoryTrustedDeviceStore(),
    seed: async (seeds) => {
      for (const { email, passwordHash, active, id } of seeds) accounts.add({ email, passwordHash, active, id })
    },
    healthCheck: async () => {},
    close: async () => {}
  }
}
