import { createHash, createHmac } from 'node:crypto'

/**
 * Every counter the plugin keeps in the attempt store, and its key: the one table of them. Keys are opaque to the
 * stores but for one rule: a `<group>/<name>` key is one of an account's own counters, and clearGroup() forgets
 * them together when the account is deleted. A key that comes from an address is an HMAC of it under a key
 * derived from the signing key (`keyMac`; one key each while a rotation keeps several), so stores hold no
 * address and a list of candidate addresses reverses none; the rest are plain hashes, or ids worthless alone.
 */
export const COUNTER_KEYS = Object.freeze({
  /** Passwords per e-mail, known or not (Login, ChangePassword, Reauthenticate…): the address's HMAC, no prefix. */
  email: (keyMac: Buffer, email: string): string => hmac(keyMac, email),
  /** Passwords per known device (contract §6): its random id, in the account's group. */
  device: (accountId: string, deviceId: string): string => `${accountGroup(accountId)}/device.${deviceId}`,
  /** Second-factor codes per account, and the lock beside the counter. */
  codes: (accountId: string): string => `mfa.${accountId}`,
  codesLock: (accountId: string): string => `mfa-lock.${accountId}`,
  /** Codes per known device, and its lock, in the account's group. */
  deviceCodes: (accountId: string, deviceId: string): string => `${accountGroup(accountId)}/mfa-device.${deviceId}`,
  deviceCodesLock: (accountId: string, deviceId: string): string => `${accountGroup(accountId)}/mfa-device-lock.${deviceId}`,
  /**
   * Wrong codes sent with one one-time token (a login challenge, a reset link), in its account's group: a plain hash
   * of the token (256 random bits: it reverses to nothing), so every instance counts on one key whatever signing keys it holds.
   */
  tokenGuesses: (accountId: string, token: string): string =>
    `${accountGroup(accountId)}/code.${createHash('sha256').update(`fastify-password-auth code-attempts\0${token}`).digest('base64url').slice(0, 32)}`,
  /** Messages of one type to one address (contract §13). */
  mail: (keyMac: Buffer, type: string, email: string): string => `mail.${type}.${hmac(keyMac, email)}`
})

/**
 * The group of an account's own counters: a plain hash of its id (no key: every instance and every key rotation
 * agrees), so the store holds no account id.
 */
export function accountGroup (accountId: string): string {
  return `acct.${createHash('sha256').update(`fastify-password-auth account-group\0${accountId}`).digest('base64url').slice(0, 22)}`
}

function hmac (keyMac: Buffer, email: string): string {
  return createHmac('sha256', keyMac).update(email).digest('base64url')
}
