import { MemoryAccountStore, MemorySessionStore } from '../../lib/index.js'
import type { ServerStores } from './types.js'

/** Everything in process memory: one instance only. */
export function memoryStores (): ServerStores {
  const accounts = new MemoryAccountStore()
  return {
    accounts,
    sessions: new MemorySessionStore(),
    seed: async (seeds) => {
      for (const { email, passwordHash, active, id } of seeds) accounts.add({ email, passwordHash, active, id })
    },
    healthCheck: async () => {},
    close: async () => {}
  }
}
