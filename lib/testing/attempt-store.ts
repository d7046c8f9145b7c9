import { strict as assert } from 'node:assert'
import type { AttemptStore, Reservation, ThrottlePolicy } from '../stores/types.js'
import { sleep, uniqueNamespace, type ContractCheck } from './check.js'

export interface AttemptStoreHarness {
  /** A store over an empty namespace (key prefix…) of its own; two namespaces share nothing. */
  create: (namespace: string) => Promise<AttemptStore>
}

/** Short durations, so the checks can watch blocks, leases and forgetting happen. */
export const CONTRACT_THROTTLE_POLICY: Readonly<ThrottlePolicy> = Object.freeze({
  freeFailures: 3,
  blockMs: 500,
  maxBlockMs: 1200,
  leaseMs: 400,
  forgetAfterMs: 800
})

const policy = CONTRACT_THROTTLE_POLICY

function granted (reservation: Reservation, message?: string): string {
  assert.ok(reservation.granted, message ?? `expected a grant, got ${JSON.stringify(reservation)}`)
  assert.equal(typeof reservation.ticket, 'string')
  return reservation.ticket
}

function denied (reservation: Reservation, maxMs: number, message?: string): number {
  assert.ok(!reservation.granted, message ?? 'expected a denial')
  assert.ok(reservation.retryAfterMs > 0 && reservation.retryAfterMs <= maxMs,
    `retryAfterMs ${reservation.retryAfterMs} should be in (0, ${maxMs}]`)
  return reservation.retryAfterMs
}

async function fail (store: AttemptStore, key: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    await store.settle(key, granted(await store.reserve(key, policy), `attempt ${i + 1} granted`), 'failure', policy)
  }
}

/**
 * The attempt store's promises (see AttemptStore): free failures, doubling blocks, resets, in-flight
 * reservations counted, leases that expire, forgetting, isolation.
 */
export function attemptStoreContract (harness: AttemptStoreHarness): ContractCheck[] {
  const fresh = async (): Promise<AttemptStore> => await harness.create(uniqueNamespace('attempts'))
  return [
    {
      name: 'the free failures are granted, then the key is blocked for blockMs',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures)
        const wait = denied(await store.reserve('key', policy), policy.blockMs)
        assert.ok(wait > policy.blockMs - 200, `blocked for about blockMs, not ${wait}`)
      }
    },
    {
      name: 'after a block one attempt is let through at a time, and its failure doubles the block',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures)
        await sleep(policy.blockMs + 50)
        const ticket = granted(await store.reserve('key', policy), 'granted after the block')
        denied(await store.reserve('key', policy), policy.leaseMs, 'a second attempt waits for the first')
        await store.settle('key', ticket, 'failure', policy)
        const wait = denied(await store.reserve('key', policy), policy.blockMs * 2)
        assert.ok(wait > policy.blockMs, `the block doubled (${wait} ms)`)
      }
    },
    {
      name: 'blocks stop growing at maxBlockMs',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures)
        await sleep(policy.blockMs + 50)
        await fail(store, 'key', 1) // block ×2 = 1000 ms
        await sleep(policy.blockMs * 2 + 50)
        await fail(store, 'key', 1) // ×4 would be 2000 ms; capped at 1200
        const wait = denied(await store.reserve('key', policy), policy.maxBlockMs)
        assert.ok(wait > policy.blockMs * 2, `capped block in force (${wait} ms)`)
      }
    },
    {
      name: 'a success resets the count',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures - 1)
        await store.settle('key', granted(await store.reserve('key', policy)), 'success', policy)
        await fail(store, 'key', policy.freeFailures)
        denied(await store.reserve('key', policy), policy.blockMs)
      }
    },
    {
      name: 'a cancelled attempt counts neither way',
      async run () {
        const store = await fresh()
        for (let i = 0; i < policy.freeFailures * 3; i++) {
          await store.settle('key', granted(await store.reserve('key', policy)), 'cancel', policy)
        }
        await fail(store, 'key', policy.freeFailures)
      }
    },
    {
      name: 'attempts in flight count: of many concurrent reservations only freeFailures are granted',
      async run () {
        const store = await fresh()
        const reservations = await Promise.all(Array.from({ length: 20 }, async () => await store.reserve('key', policy)))
        assert.equal(reservations.filter((r) => r.granted).length, policy.freeFailures)
        for (const reservation of reservations) if (!reservation.granted) denied(reservation, policy.leaseMs)
      }
    },
    {
      name: 'failures recorded leave fewer slots for attempts in flight',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures - 1)
        const reservations = await Promise.all(Array.from({ length: 5 }, async () => await store.reserve('key', policy)))
        assert.equal(reservations.filter((r) => r.granted).length, 1)
      }
    },
    {
      name: 'a reservation never settled stops counting after leaseMs',
      async run () {
        const store = await fresh()
        for (let i = 0; i < policy.freeFailures; i++) granted(await store.reserve('key', policy))
        denied(await store.reserve('key', policy), policy.leaseMs)
        await sleep(policy.leaseMs + 100)
        granted(await store.reserve('key', policy), 'granted once the leases ran out')
      }
    },
    {
      name: 'failures are forgotten forgetAfterMs after the last one',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures - 1)
        await sleep(policy.forgetAfterMs + 100)
        await fail(store, 'key', policy.freeFailures)
        denied(await store.reserve('key', policy), policy.blockMs)
      }
    },
    {
      name: 'settling an unknown ticket or key is harmless',
      async run () {
        const store = await fresh()
        await store.settle('never-reserved', 'no-such-ticket', 'failure', policy)
        await store.settle('never-reserved', 'no-such-ticket', 'success', policy)
        granted(await store.reserve('never-reserved', policy))
      }
    },
    {
      name: 'keys and namespaces are counted apart',
      async run () {
        const first = await fresh()
        const second = await fresh()
        await fail(first, 'key', policy.freeFailures)
        denied(await first.reserve('key', policy), policy.blockMs)
        granted(await first.reserve('other-key', policy))
        granted(await second.reserve('key', policy))
      }
    }
  ]
}
