import { MemoryAccountStore, MemoryRevocationStore } from '../../lib/index.js'
import type { ServerStores } from './types.js'

/** Everything in process memory: one instance only. */
export function memoryStores (): ServerStores {
  const accounts = new MemoryAccountStore()
  return {
    accounts,
    revocations: new MemoryRevocationStore(),
    seed: async (seeds) => { for (const seed of seeds) accounts.add(seed) },
    healthCheck: async () => {},
    close: async () => {}
  }
}
