import { createHmac } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { StoreCall } from '../stores/store-call.js'
import type { AttemptStore, ThrottlePolicy } from '../stores/types.js'
import type { KeyRing } from '../tokens/key-ring.js'
import { reserveAttempt } from '../throttle/reserve-attempt.js'

const HOUR_MS = 3_600_000

/**
 * At most `limit` messages per address per clock hour, over every route that sends one (contract §13),
 * counted in the attempt store: each message is one "failure" on the key `mail.<HMAC of the address>.<hour>`,
 * so the key blocks after `limit` of them and the next hour starts a new key.
 */
export class MailLimit {
  readonly #store: AttemptStore
  readonly #storeCall: StoreCall
  readonly #keyMac: Buffer
  readonly #policy: ThrottlePolicy

  constructor (store: AttemptStore, limit: number, storeCall: StoreCall, keyRing: KeyRing) {
    this.#store = store
    this.#storeCall = storeCall
    this.#keyMac = keyRing.derive('attempt-key').current.key
    this.#policy = { freeFailures: limit, blockMs: HOUR_MS, maxBlockMs: HOUR_MS, forgetAfterMs: HOUR_MS, leaseMs: 10_000 }
  }

  /** Counts one message to `email`; false (nothing counted) when the address had its `limit` this hour. */
  async take (request: FastifyRequest, email: string): Promise<boolean> {
    const key = `mail.${createHmac('sha256', this.#keyMac).update(email).digest('base64url')}.${Math.floor(Date.now() / HOUR_MS)}`
    const message = await reserveAttempt(this.#store, this.#storeCall, request.log, key, this.#policy)
    if (!('settle' in message)) return false
    await message.settle('failure')
    return true
  }
}
