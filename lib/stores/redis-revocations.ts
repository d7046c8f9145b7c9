import type { Cluster, Redis } from 'ioredis'
import type { RevocationStore } from './types.js'

export interface RedisRevocationStoreOptions {
  /** Your ioredis client (or Cluster); the store never connects or disconnects it. */
  client: Redis | Cluster
  /** Key prefix (default 'fastify-password-auth:revoked:'). */
  prefix?: string
}

/**
 * Revoked token ids in Redis: one key per token id that expires with the token (SET … PXAT), so every
 * instance sees a logout at once and Redis forgets it by itself. Single-key commands: Cluster-safe.
 */
export class RedisRevocationStore implements RevocationStore {
  readonly #client: Redis | Cluster
  readonly #prefix: string

  constructor ({ client, prefix = 'fastify-password-auth:revoked:' }: RedisRevocationStoreOptions) {
    this.#client = client
    this.#prefix = prefix
  }

  async revoke (tokenId: string, expiresAt: number): Promise<void> {
    if (expiresAt <= Date.now()) return
    await this.#client.set(this.#prefix + tokenId, '1', 'PXAT', expiresAt)
  }

  async isRevoked (tokenId: string): Promise<boolean> {
    return await this.#client.exists(this.#prefix + tokenId) === 1
  }
}
