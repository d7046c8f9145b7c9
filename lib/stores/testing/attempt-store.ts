import { strict as assert } from 'node:assert'
import { randomUUID } from 'node:crypto'
import type { AttemptStore, Reservation, ThrottlePolicy } from '../types.js'
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
/**
 * For the concurrent waves: a lease that outlives the wave however slow the machine or the store, so a lease
 * that ran out mid-wave cannot free a slot and pass for a store that counts wrong.
 */
const wavePolicy: Readonly<ThrottlePolicy> = Object.freeze({ ...policy, leaseMs: 60_000 })

/** Reserves under a fresh ticket, as the plugin does; resolves with the ticket and the answer. */
async function reserve (store: AttemptStore, key: string, using = policy): Promise<{ ticket: string, reservation: Reservation }> {
  const ticket = randomUUID()
  return { ticket, reservation: await store.reserve(key, ticket, using) }
}

/** Reserves and expects a grant; resolves with the ticket. */
async function grant (store: AttemptStore, key: string, message?: string): Promise<string> {
  const { ticket, reservation } = await reserve(store, key)
  assert.ok(reservation.granted, message ?? `expected a grant, got ${JSON.stringify(reservation)}`)
  return ticket
}

function denied (reservation: Reservation, maxMs: number, message?: string): number {
  assert.ok(!reservation.granted, message ?? 'expected a denial')
  assert.ok(reservation.retryAfterMs > 0 && reservation.retryAfterMs <= maxMs,
    `retryAfterMs ${reservation.retryAfterMs} should be in (0, ${maxMs}]`)
  return reservation.retryAfterMs
}

/** Reserves and expects a denial of at most `maxMs`; resolves with the wait. */
async function deny (store: AttemptStore, key: string, maxMs: number, message?: string): Promise<number> {
  return denied((await reserve(store, key)).reservation, maxMs, message)
}

async function fail (store: AttemptStore, key: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    await store.settle(key, await grant(store, key, `attempt ${i + 1} granted`), 'failure', policy)
  }
}

/**
 * The attempt store's promises (see AttemptStore): free failures, doubling blocks, resets, in-flight
 * reservations counted, tickets named by the caller and cancelled by it, leases that expire, forgetting,
 * isolation.
 */
export function attemptStoreContract (harness: AttemptStoreHarness): ContractCheck[] {
  const fresh = async (): Promise<AttemptStore> => await harness.create(uniqueNamespace('attempts'))
  return [
    {
      name: 'the free failures are granted, then the key is blocked for blockMs',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures)
        const wait = await deny(store, 'key', policy.blockMs)
        assert.ok(wait > policy.blockMs - 200, `blocked for about blockMs, not ${wait}`)
      }
    },
    {
      name: 'after a block one attempt is let through at a time, and its failure doubles the block',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures)
        await sleep(policy.blockMs + 50)
        const ticket = await grant(store, 'key', 'granted after the block')
        await deny(store, 'key', policy.leaseMs, 'a second attempt waits for the first')
        await store.settle('key', ticket, 'failure', policy)
        const wait = await deny(store, 'key', policy.blockMs * 2)
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
        const wait = await deny(store, 'key', policy.maxBlockMs)
        assert.ok(wait > policy.blockMs * 2, `capped block in force (${wait} ms)`)
      }
    },
    {
      name: 'a success resets the count',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures - 1)
        await store.settle('key', await grant(store, 'key'), 'success', policy)
        await fail(store, 'key', policy.freeFailures)
        await deny(store, 'key', policy.blockMs)
      }
    },
    {
      name: 'a cancelled attempt counts neither way',
      async run () {
        const store = await fresh()
        for (let i = 0; i < policy.freeFailures * 3; i++) {
          await store.settle('key', await grant(store, 'key'), 'cancel', policy)
        }
        await fail(store, 'key', policy.freeFailures)
      }
    },
    {
      name: 'attempts in flight count: of many concurrent reservations only freeFailures are granted',
      async run () {
        const store = await fresh()
        const reservations = await Promise.all(Array.from({ length: 20 }, async () => (await reserve(store, 'key', wavePolicy)).reservation))
        assert.equal(reservations.filter((r) => r.granted).length, policy.freeFailures)
        for (const reservation of reservations) if (!reservation.granted) denied(reservation, wavePolicy.leaseMs)
      }
    },
    {
      name: 'the caller names each reservation: cancelling its ticket frees the slot at once',
      async run () {
        const store = await fresh()
        const tickets: string[] = []
        for (let i = 0; i < policy.freeFailures; i++) tickets.push(await grant(store, 'key'))
        await deny(store, 'key', policy.leaseMs, 'every slot is taken')
        // What the plugin sends when it gave up waiting for a reserve that the store ran late.
        await store.settle('key', tickets[1]!, 'cancel', policy)
        await grant(store, 'key', 'the cancelled slot is free again')
        await deny(store, 'key', policy.leaseMs)
      }
    },
    {
      name: 'reserving the same ticket again holds one slot and is granted again (a resent command)',
      async run () {
        const store = await fresh()
        const ticket = randomUUID()
        for (let i = 0; i < 2; i++) assert.ok((await store.reserve('key', ticket, policy)).granted, `reserve ${i + 1} of one ticket`)
        for (let i = 1; i < policy.freeFailures; i++) await grant(store, 'key', `slot ${i + 1}`)
        await deny(store, 'key', policy.leaseMs, 'the repeated ticket took one slot only')
        assert.ok((await store.reserve('key', ticket, policy)).granted, 'a ticket that holds a slot is granted again')
        await store.settle('key', ticket, 'failure', policy)
      }
    },
    {
      name: 'failures recorded leave fewer slots for attempts in flight',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures - 1)
        const reservations = await Promise.all(Array.from({ length: 5 }, async () => (await reserve(store, 'key')).reservation))
        assert.equal(reservations.filter((r) => r.granted).length, 1)
      }
    },
    {
      name: 'a reservation never settled stops counting after leaseMs',
      async run () {
        const store = await fresh()
        for (let i = 0; i < policy.freeFailures; i++) await grant(store, 'key')
        await deny(store, 'key', policy.leaseMs)
        await sleep(policy.leaseMs + 100)
        await grant(store, 'key', 'granted once the leases ran out')
      }
    },
    {
      name: 'failures are forgotten forgetAfterMs after the last one',
      async run () {
        const store = await fresh()
        await fail(store, 'key', policy.freeFailures - 1)
        await sleep(policy.forgetAfterMs + 100)
        await fail(store, 'key', policy.freeFailures)
        await deny(store, 'key', policy.blockMs)
      }
    },
    {
      name: 'settling an unknown ticket or key is harmless',
      async run () {
        const store = await fresh()
        await store.settle('never-reserved', 'no-such-ticket', 'failure', policy)
        await store.settle('never-reserved', 'no-such-ticket', 'success', policy)
        await grant(store, 'never-reserved')
      }
    },
    {
      name: 'settle resolves the block a failure started, and 0 for every other settle',
      async run () {
        const store = await fresh()
        const settled: unknown[] = []
        for (let i = 0; i < policy.freeFailures; i++) settled.push(await store.settle('key', await grant(store, 'key'), 'failure', policy))
        assert.deepEqual(settled, [...Array.from({ length: policy.freeFailures - 1 }, () => 0), policy.blockMs], 'only the last free failure blocks')
        await sleep(policy.blockMs + 50)
        assert.equal(await store.settle('key', await grant(store, 'key'), 'failure', policy), policy.blockMs * 2, 'the doubled block')
        await sleep(policy.blockMs * 2 + 50)
        assert.equal(await store.settle('key', await grant(store, 'key'), 'success', policy), 0)
        assert.equal(await store.settle('key', await grant(store, 'key'), 'cancel', policy), 0)
      }
    },
    {
      name: 'known devices: a device key keeps its own count beside its e-mail\'s, with concurrent callers on both',
      async run () {
        const store = await fresh()
        const email = 'Pz0c7Yd2lS5mH1b9vQ3xW8eR6tU4iO0aK2jN5gF7hL1'
        const devices = ['device.4f1Xq9bT2mZ7cK0pL3sV8w', 'device.aR5nE1yU6oI2hJ9gD4fB0k']
        const wave = async (key: string): Promise<number> => {
          const reserved = await Promise.all(Array.from({ length: 50 }, async () => await reserve(store, key, wavePolicy)))
          const granted = reserved.filter(({ reservation }) => reservation.granted)
          for (const { ticket } of granted) await store.settle(key, ticket, 'cancel', wavePolicy)
          return granted.length
        }
        const granted = await Promise.all([email, ...devices].map(wave))
        assert.deepEqual(granted, [policy.freeFailures, policy.freeFailures, policy.freeFailures], 'each key admits its own free failures at once')
        await fail(store, devices[0]!, policy.freeFailures)
        await deny(store, devices[0]!, policy.blockMs, 'the device is blocked')
        await grant(store, devices[1]!, 'another device of the same e-mail is not')
        await grant(store, email, 'nor is the e-mail')
      }
    },
    {
      name: 'keys and namespaces are counted apart',
      async run () {
        const first = await fresh()
        const second = await fresh()
        await fail(first, 'key', policy.freeFailures)
        await deny(first, 'key', policy.blockMs)
        await grant(first, 'other-key')
        await grant(second, 'key')
      }
    },
    {
      name: 'clear (when the store has it) forgets a key\'s failures, block and reservations, and no other key\'s',
      async run () {
        const store = await fresh()
        if (store.clear === undefined) return
        await fail(store, 'key', policy.freeFailures)
        await fail(store, 'other-key', policy.freeFailures)
        await deny(store, 'key', policy.blockMs)
        await store.clear('key')
        for (let i = 0; i < policy.freeFailures; i++) await grant(store, 'key', `granted ${i + 1} after the clear`)
        await store.clear('key')
        await fail(store, 'key', policy.freeFailures - 1)
        await grant(store, 'key', 'the count starts from nothing')
        await deny(store, 'other-key', policy.blockMs)
        await store.clear('never-seen')
      }
    },
    {
      name: 'clearGroup (when the store has it) forgets every key of the group (<group>/…), blocked or in flight, and no other key',
      async run () {
        const store = await fresh()
        if (store.clearGroup === undefined) return
        const [mine, alsoMine, inFlight, theirs, plain] = ['acct.a/device.1', 'acct.a/mfa-device.1', 'acct.a/device.2', 'acct.b/device.1', 'acct.a']
        for (const key of [mine, alsoMine]) await fail(store, key, policy.freeFailures)
        // A key that clear() removed first is harmless to clearGroup.
        await store.clear?.(mine)
        // Right before clearGroup, so no block or lease ends by itself meanwhile on a slow store.
        for (const key of [theirs, plain]) await fail(store, key, policy.freeFailures)
        for (let i = 0; i < policy.freeFailures; i++) await grant(store, inFlight)
        await store.clearGroup('acct.a')
        await deny(store, theirs, policy.blockMs, 'another group is untouched')
        await deny(store, plain, policy.blockMs, 'a key named like the group, without the slash, is untouched')
        for (const key of [inFlight, mine, alsoMine]) {
          for (let i = 0; i < policy.freeFailures; i++) await grant(store, key, `${key}: granted ${i + 1} after clearGroup`)
        }
        await store.clearGroup('acct.never-seen')
      }
    }
  ]
}
