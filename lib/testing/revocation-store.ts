import { strict as assert } from 'node:assert'
import type { RevocationStore } from '../stores/types.js'
import { sleep, uniqueNamespace, type ContractCheck } from './check.js'

export interface RevocationStoreHarness {
  /** A store over an empty namespace (table, key prefix…) of its own; two namespaces share nothing. */
  create: (namespace: string) => Promise<RevocationStore>
}

/** The revocation store's promises: revoked until expiry, then gone; idempotent; isolated. */
export function revocationStoreContract (harness: RevocationStoreHarness): ContractCheck[] {
  const fresh = async (): Promise<RevocationStore> => await harness.create(uniqueNamespace('revocations'))
  return [
    {
      name: 'a revoked token id is revoked; others are not',
      async run () {
        const store = await fresh()
        assert.equal(await store.isRevoked('q6R0sXvDqk7rQyH7hY2dNw'), false)
        await store.revoke('q6R0sXvDqk7rQyH7hY2dNw', Date.now() + 60_000)
        assert.equal(await store.isRevoked('q6R0sXvDqk7rQyH7hY2dNw'), true)
        assert.equal(await store.isRevoked('q6R0sXvDqk7rQyH7hY2dNx'), false)
        assert.equal(await store.isRevoked('q6R0sXvDqk7rQyH7hY2dN'), false)
      }
    },
    {
      name: 'a revocation ends when the token expires',
      async run () {
        const store = await fresh()
        await store.revoke('short-lived_-token', Date.now() + 400)
        assert.equal(await store.isRevoked('short-lived_-token'), true)
        await sleep(700)
        assert.equal(await store.isRevoked('short-lived_-token'), false)
      }
    },
    {
      name: 'revoking an already expired token is harmless',
      async run () {
        const store = await fresh()
        await store.revoke('expired', Date.now() - 1000)
        assert.equal(await store.isRevoked('expired'), false)
      }
    },
    {
      name: 'revoking twice is the same as once',
      async run () {
        const store = await fresh()
        await store.revoke('twice', Date.now() + 60_000)
        await store.revoke('twice', Date.now() + 60_000)
        assert.equal(await store.isRevoked('twice'), true)
      }
    },
    {
      name: 'concurrent revocations are all kept',
      async run () {
        const store = await fresh()
        const ids = Array.from({ length: 100 }, (_, i) => `concurrent-${i}-${'x'.repeat(i % 7)}`)
        await Promise.all(ids.map(async (id) => { await store.revoke(id, Date.now() + 60_000) }))
        const revoked = await Promise.all(ids.map(async (id) => await store.isRevoked(id)))
        assert.ok(revoked.every(Boolean), 'every id revoked')
      }
    },
    {
      name: 'stores in different namespaces share nothing',
      async run () {
        const first = await fresh()
        const second = await fresh()
        await first.revoke('shared-id', Date.now() + 60_000)
        assert.equal(await second.isRevoked('shared-id'), false)
      }
    }
  ]
}
