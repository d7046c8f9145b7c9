import { createHmac, randomBytes } from 'node:crypto'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { EmitEvent, TrustEndReason } from '../common/events.js'
import { describeDevice, deviceLabel } from '../http/user-agent.js'
import type { StoreCall } from '../stores/store-call.js'
import type { PasswordAuthAccount, TrustedDeviceInfo, TrustedDeviceStore } from '../stores/types.js'
import type { KeyRing } from '../tokens/key-ring.js'

/** What a trust is bound to: the device, and the account as it stands (its password and its two factors). */
export interface TrustSubject {
  account: PasswordAuthAccount
  /** The known device (KnownDevices.recognise, or the one a LoginMfa is issuing a token for). */
  deviceId: string
  /** The account's enrolment (SecondFactor.enrolment): a new set-up is a new enrolment. */
  enrolment: string
}

export interface TrustedDevicesOptions {
  store: TrustedDeviceStore
  keyRing: KeyRing
  storeCall: StoreCall
  emit: EmitEvent
  /** How long a trust lasts (mfa.trustDays). */
  ttlMs: number
}

/**
 * Devices trusted for the second factor (contract §21): a LoginMfa with `rememberDevice` trusts the device its
 * device token names, and a later Login from it with the right password needs no code. The store keeps an
 * HMAC of the device id bound to the account, its credential version and its enrolment, so a password change
 * or reset and a new or removed second factor end every trust even before the store's generation moves on
 * (endAll, which each of them and EndOthers also call). Nothing stored works as a device token.
 */
export class TrustedDevices {
  readonly ttlMs: number
  readonly #store: TrustedDeviceStore
  readonly #keys: ReadonlyArray<{ kid: string, key: Buffer }>
  readonly #storeCall: StoreCall
  readonly #emit: EmitEvent

  constructor ({ store, keyRing, storeCall, emit, ttlMs }: TrustedDevicesOptions) {
    this.#store = store
    this.#keys = keyRing.derive('trusted-device').all
    this.#storeCall = storeCall
    this.#emit = emit
    this.ttlMs = ttlMs
  }

  /** The account's trust generation: read it before checking anything, and hand it to trust(). */
  async generation (request: FastifyRequest, accountId: string): Promise<number> {
    return await this.#storeCall(request.log, 'trustedDevices.generation', () => this.#store.generation(accountId))
  }

  /**
   * Trusts the device for ttlMs; resolves its public id, or null when every trust of the account ended since
   * `generation` was read, or the store failed (logged): that costs the owner a code at the next Login, never a session.
   */
  async trust (request: FastifyRequest, subject: TrustSubject, generation: number): Promise<string | null> {
    const { kid, key } = this.#keys[0]!
    const id = randomBytes(16).toString('base64url')
    const device = { id, deviceHash: hash(kid, key, subject), label: deviceLabel(describeDevice(request.headers['user-agent'])) }
    const stored = await this.#storeCall(request.log, 'trustedDevices.trust', () => this.#store.trust(subject.account.id, device, this.ttlMs, generation))
      .catch(() => false)
    if (!stored) return null
    this.#emit(request, { type: 'mfa.device_trusted', accountId: subject.account.id, trustId: id })
    return id
  }

  /** The live trust of this device for the account as it stands, its use recorded; null if there is none. */
  async use (request: FastifyRequest, subject: TrustSubject): Promise<{ id: string, generation: number } | null> {
    const hashes = this.#keys.map(({ kid, key }) => hash(kid, key, subject))
    return await this.#storeCall(request.log, 'trustedDevices.use', () => this.#store.use(subject.account.id, hashes))
  }

  /** Whether no end of every trust ran since `generation` (a Login that used a trust checks it once its session exists). */
  async stillCurrent (request: FastifyRequest, accountId: string, generation: number): Promise<boolean> {
    return await this.generation(request, accountId) === generation
  }

  async list (request: FastifyRequest, accountId: string): Promise<TrustedDeviceInfo[]> {
    return await this.#storeCall(request.log, 'trustedDevices.list', () => this.#store.list(accountId))
  }

  /** Ends one trust of the account; false if it has none with that id. */
  async remove (request: FastifyRequest, accountId: string, id: string): Promise<boolean> {
    const removed = await this.#storeCall(request.log, 'trustedDevices.remove', () => this.#store.remove(accountId, id))
    if (removed) this.#emit(request, { type: 'mfa.device_trust_ended', accountId, trustId: id, reason: 'removed' })
    return removed
  }

  /**
   * Ends every trust of the account (two factors off or set up anew, a password change or reset, EndOthers);
   * false if the store failed (logged). After a password change or a new enrolment that is tidying up only: the
   * hashes bind both, so no trust of before still works.
   */
  async endAll (caller: FastifyRequest | { log: FastifyBaseLogger }, accountId: string, reason: Exclude<TrustEndReason, 'removed'>): Promise<boolean> {
    const ended = await this.#storeCall(caller.log, 'trustedDevices.endAll', () => this.#store.endAll(accountId)).then(() => true, () => false)
    if (ended) this.#emit('headers' in caller ? caller : undefined, { type: 'mfa.device_trust_ended', accountId, reason })
    return ended
  }

  /** Removes every trust of a deleted account and its generation (a store without forget() ends them instead); rejects if the store fails. */
  async forget (caller: { log: FastifyBaseLogger }, accountId: string): Promise<void> {
    const store = this.#store
    await this.#storeCall(caller.log, 'trustedDevices.forget', async () => { await (store.forget === undefined ? store.endAll(accountId) : store.forget(accountId)) })
  }
}

function hash (kid: string, key: Buffer, { account, deviceId, enrolment }: TrustSubject): string {
  return `${kid}.${createHmac('sha256', key).update(`${account.id}\0${account.credentialVersion}\0${enrolment}\0${deviceId}`).digest('base64url')}`
}
