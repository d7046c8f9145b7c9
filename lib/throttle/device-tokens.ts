import { createHmac, timingSafeEqual } from 'node:crypto'
import { randomId } from '../common/random-id.js'
import type { KeyRing } from '../tokens/key-ring.js'

/** The account a device token is for, as it is when the token is minted or read. */
export interface DeviceOwner {
  id: string
  credentialVersion: number
}

// <device id: 128 bits>.<expiry, epoch seconds in base 36>.<HMAC-SHA256 over both, the account, its e-mail and credential version>
const FORMAT = /^([\w-]{22})\.([0-9a-z]{1,9})\.([\w-]{43})$/
const MAC_LABEL = 'fastify-password-auth device-token v2\0'

/**
 * Device tokens (contract §6, "known devices"): proof that this client logged in to this e-mail before.
 * Computed, never stored: the MAC binds the device id and the expiry to the normalised e-mail and the account
 * that has it (an address deleted and registered again is a new account: its old tokens prove nothing), with a key
 * derived from each configured JWT key (the first mints; every key with secret material still
 * recognises its tokens, so rotating the signing key forgets no device). The attempt stores see only
 * the device id, which is worthless without the MAC.
 */
export class DeviceTokens {
  readonly ttlSeconds: number
  readonly #keys: readonly Buffer[]

  constructor (keyRing: KeyRing, ttlSeconds: number) {
    this.#keys = keyRing.derive('device-token').all.map(({ key }) => key)
    this.ttlSeconds = ttlSeconds
  }

  /**
   * A token for `email` while it is `account`'s and the account's credential version is the one given (a
   * password change or reset ends it: contract §6); `deviceId` keeps the device's counter when it already had one.
   */
  mint (email: string, account: DeviceOwner, deviceId: string = randomId()): string {
    const body = `${deviceId}.${(Math.floor(Date.now() / 1000) + this.ttlSeconds).toString(36)}`
    return `${body}.${mac(this.#keys[0]!, body, bound(email, account))}`
  }

  /** Whether `token` has the shape of a device token (nothing checked). */
  looksLikeOne (token: unknown): boolean {
    return typeof token === 'string' && FORMAT.test(token)
  }

  /** The device id of a live token minted for `email` and `account` as it is now, by one of the configured keys; otherwise null. */
  read (token: unknown, email: string, account: DeviceOwner): string | null {
    if (typeof token !== 'string') return null
    const match = FORMAT.exec(token)
    if (match === null) return null
    const [, deviceId, expiry, signature] = match
    if (parseInt(expiry!, 36) * 1000 <= Date.now()) return null
    const body = `${deviceId}.${expiry}`
    const presented = Buffer.from(signature!)
    return this.#keys.some((key) => timingSafeEqual(Buffer.from(mac(key, body, bound(email, account))), presented)) ? deviceId! : null
  }
}

/** What a token is bound to: the e-mail, the account, and the credential version it was minted at. */
function bound (email: string, { id, credentialVersion }: DeviceOwner): string {
  return `${email}\0${id}\0${credentialVersion}`
}

function mac (key: Buffer, body: string, binding: string): string {
  return createHmac('sha256', key).update(MAC_LABEL).update(body).update('\0').update(binding).digest('base64url')
}
