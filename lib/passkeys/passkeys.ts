import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { EmitEvent, PasskeyFailureReason, PasskeyRoute } from '../common/events.js'
import type { AccountReads } from '../stores/account-reads.js'
import type { StoreCall } from '../stores/store-call.js'
import type { PasskeyStore, PasswordAuthAccount, StoredPasskey } from '../stores/types.js'
import type { OneTimeTokens } from '../tokens/one-time-tokens.js'
import { PURPOSE, type TokenPurpose } from '../tokens/purposes.js'
import { readClientData } from './client-data.js'
import { decoyPublicKey, verifyAssertion, verifyRegistration, type RelyingParty } from './webauthn.js'

/** The parts of an authentication response (AuthenticationResponseJSON) read here; the library reads the rest. */
export interface AssertionJSON { id: string, response: { clientDataJSON: string, userHandle?: string } }
/** The parts of a registration response (RegistrationResponseJSON) read here. */
export interface AttestationJSON { id: string, response: { clientDataJSON: string, transports?: string[] } }

/** What a challenge is for: each is refused by every other (contract §18). */
export type PasskeyPurpose = 'register' | 'login' | 'reauthenticate' | 'mfa'

/** Each ceremony's challenges, a one-time token purpose of their own. */
const CHALLENGES: Readonly<Record<PasskeyPurpose, TokenPurpose>> = Object.freeze({
  register: PURPOSE.passkeyRegister, login: PURPOSE.passkeyLogin, reauthenticate: PURPOSE.passkeyReauthenticate, mfa: PURPOSE.passkeyMfa
})

/** A passkey as its owner sees it. */
export interface PasskeyView {
  id: string
  name: string
  createdAt: string
  lastUsedAt: string | null
  backedUp: boolean
}

/** An accepted assertion: the owner, the passkey, and the session's `amr` (RFC 8176). */
export interface AcceptedPasskey {
  outcome: 'accepted'
  account: PasswordAuthAccount
  passkey: StoredPasskey
  amr: readonly string[]
}

export type PasskeyCheck = AcceptedPasskey | { outcome: 'rejected', accountId?: string }

/** What register() did. */
export type PasskeyRegistration = { outcome: 'added', passkey: PasskeyView } | { outcome: 'invalid' } | { outcome: 'limit' }

const AMR_DEVICE_BOUND = Object.freeze(['hwk', 'mfa'])
const AMR_SYNCED = Object.freeze(['swk', 'mfa'])
const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'])

export interface PasskeysOptions {
  store: PasskeyStore
  accounts: AccountReads
  oneTimeTokens: OneTimeTokens
  storeCall: StoreCall
  emit: EmitEvent
  rp: RelyingParty
  ttlMs: number
  max: number
  /** For calls made outside a request (the host API). */
  log: FastifyBaseLogger
}

export const viewOf = (passkey: StoredPasskey): PasskeyView => ({
  id: passkey.id,
  name: passkey.name,
  createdAt: new Date(passkey.createdAt).toISOString(),
  lastUsedAt: passkey.lastUsedAt === null ? null : new Date(passkey.lastUsedAt).toISOString(),
  backedUp: passkey.backedUp
})

/**
 * Passkeys (contract §18): options with single-use challenges kept as keyed hashes in the one-time token
 * store, registration and assertion verified by @simplewebauthn/server with user verification required,
 * origins and rpId from configuration; the user handle, signature counter and account checked here.
 */
export class Passkeys {
  readonly rp: RelyingParty
  readonly max: number
  readonly #o: PasskeysOptions
  #decoy: Promise<string> | undefined

  constructor (options: PasskeysOptions) {
    this.#o = options
    this.rp = options.rp
    this.max = options.max
  }

  /** Creation options for the account (contract §18): its handle, its passkeys excluded, resident key and UV required. */
  async registrationOptions (request: FastifyRequest, account: PasswordAuthAccount): Promise<Record<string, unknown>> {
    const { store, storeCall, oneTimeTokens, ttlMs } = this.#o
    const handle = await this.userHandle(request, account.id)
    const passkeys = await storeCall(request.log, 'passkeys.list', () => store.list(account.id))
    const challenge = await oneTimeTokens.issue(request, CHALLENGES.register, account, ttlMs)
    return {
      challenge,
      rp: { id: this.rp.id, name: this.rp.name },
      user: { id: handle, name: account.email, displayName: account.email },
      pubKeyCredParams: [{ alg: -7, type: 'public-key' }, { alg: -257, type: 'public-key' }],
      timeout: ttlMs,
      excludeCredentials: passkeys.map(({ id, transports }) => ({ id, type: 'public-key', transports })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
      attestation: 'none',
      extensions: { credProps: true }
    }
  }

  /** The account's WebAuthn user handle: 32 random bytes, made on first need and kept (never the id or the e-mail). */
  async userHandle (request: FastifyRequest, accountId: string): Promise<string> {
    const candidate = randomBytes(32).toString('base64url')
    return await this.#o.storeCall(request.log, 'passkeys.userHandle', () => this.#o.store.userHandle(accountId, candidate))
  }

  /**
   * The account's passkey generation: read it before the request's authentication is checked again, and hand it to
   * register(), so that a removal of every passkey landing in between wins (contract §18).
   */
  async generation (request: FastifyRequest, accountId: string): Promise<number> {
    return await this.#o.storeCall(request.log, 'passkeys.generation', () => this.#o.store.generation(accountId))
  }

  /** Verifies a registration response for the account and stores the passkey, if the account's generation is still `generation`. */
  async register (request: FastifyRequest, account: PasswordAuthAccount, response: AttestationJSON, name: string, generation: number): Promise<PasskeyRegistration> {
    const { store, storeCall, oneTimeTokens, emit } = this.#o
    const fail = (reason: PasskeyFailureReason): PasskeyRegistration => {
      emit(request, { type: 'passkey.failed', route: 'Passkeys', reason, accountId: account.id })
      return { outcome: 'invalid' }
    }
    const clientData = readClientData(response.response?.clientDataJSON)
    if (clientData === null) return fail('verification')
    const bound = await oneTimeTokens.consume(request, clientData.challenge, CHALLENGES.register)
    if (bound === null || bound.accountId !== account.id) return fail('challenge')
    if (clientData.crossOrigin) return fail('cross_origin')
    // A response that names a user handle names this account's (the options gave no other).
    const userHandle = (response.response as { userHandle?: unknown }).userHandle
    if (userHandle !== undefined && userHandle !== await this.userHandle(request, account.id)) return fail('user_handle')
    const verified = await verifyRegistration(response, clientData.challenge, this.rp)
    if (verified === null) return fail('verification')
    const passkey: StoredPasskey = {
      ...verified,
      accountId: account.id,
      transports: (response.response.transports ?? []).filter((transport) => TRANSPORTS.has(transport)),
      name,
      createdAt: Date.now(),
      lastUsedAt: null
    }
    const added = await storeCall(request.log, 'passkeys.add', () => store.add(passkey, this.max, generation))
    if (added === 'duplicate') return fail('duplicate')
    // Every passkey of the account was removed (a reset, a revert, an admin) while this one was in flight.
    if (added === 'outrun') return fail('outrun')
    if (added === 'limit') return { outcome: 'limit' }
    emit(request, { type: 'passkey.registered', accountId: account.id, passkeyId: passkey.id, synced: passkey.backupEligible })
    return { outcome: 'added', passkey: viewOf(passkey) }
  }

  /** The account's passkeys as their owner sees them (GET /Passkeys, the account export). */
  async list (caller: { log: FastifyBaseLogger }, accountId: string): Promise<PasskeyView[]> {
    return (await this.#o.storeCall(caller.log, 'passkeys.list', () => this.#o.store.list(accountId))).map(viewOf)
  }

  /** Removes one of the account's passkeys; null if it has none with this id. */
  async remove (request: FastifyRequest, accountId: string, passkeyId: string): Promise<StoredPasskey | null> {
    const { store, storeCall, emit } = this.#o
    const passkey = await storeCall(request.log, 'passkeys.get', () => store.get(passkeyId))
    if (passkey?.accountId !== accountId) return null
    if (!await storeCall(request.log, 'passkeys.remove', () => store.remove(accountId, passkeyId))) return null
    emit(request, { type: 'passkey.removed', accountId, passkeyId, count: 1, reason: 'user' })
    return passkey
  }

  /**
   * Removes every passkey of the account; resolves how many. `reason`: a password reset, or (`host`) the account's
   * own end or revert of an address change, or an admin (account/). `caller`: the request, or the host API's logger.
   */
  /** Removes every passkey and the user handle of a deleted account (a store without forget(): the passkeys only). */
  async forget (caller: { log: FastifyBaseLogger }, accountId: string): Promise<number> {
    const { store, storeCall, emit } = this.#o
    if (store.forget === undefined) return await this.removeAll(caller, accountId)
    const count = await storeCall(caller.log, 'passkeys.forget', async () => await store.forget!(accountId))
    const request = 'id' in caller && 'raw' in caller ? caller as FastifyRequest : undefined
    if (count > 0) emit(request, { type: 'passkey.removed', accountId, count, reason: 'host' })
    return count
  }

  async removeAll (caller: { log: FastifyBaseLogger } | undefined, accountId: string, reason: 'password_reset' | 'host' = 'host'): Promise<number> {
    const { store, storeCall, emit } = this.#o
    const count = await storeCall(caller?.log ?? this.#o.log, 'passkeys.removeAll', () => store.removeAll(accountId))
    const request = caller !== undefined && 'id' in caller && 'raw' in caller ? caller as FastifyRequest : undefined
    if (count > 0) emit(request, { type: 'passkey.removed', accountId, count, reason })
    return count
  }

  /**
   * Request options: a new challenge for `purpose`, bound to `account` (none for a sign-in, whose options
   * are the same for every caller and list no credential); the account's passkeys listed otherwise.
   */
  async requestOptions (request: FastifyRequest, purpose: Exclude<PasskeyPurpose, 'register'>, account: PasswordAuthAccount | null): Promise<Record<string, unknown>> {
    const { store, storeCall, oneTimeTokens, ttlMs } = this.#o
    const passkeys = account === null ? [] : await storeCall(request.log, 'passkeys.list', () => store.list(account.id))
    const challenge = await oneTimeTokens.issue(request, CHALLENGES[purpose], account, ttlMs)
    return {
      challenge,
      timeout: ttlMs,
      rpId: this.rp.id,
      allowCredentials: passkeys.map(({ id, transports }) => ({ id, type: 'public-key', transports })),
      userVerification: 'required'
    }
  }

  /**
   * Verifies an authentication response for `purpose` (and, except for a sign-in, `accountId`'s challenge
   * and passkey). Failures are counted on no credential and no e-mail (contract §18): an assertion cannot be
   * guessed, and a counter that whoever knows a credential id can fill would lock its owner out. Every refusal
   * does the same work: an unknown credential is checked against a decoy key.
   */
  async verify (request: FastifyRequest, response: AssertionJSON, route: PasskeyRoute, purpose: Exclude<PasskeyPurpose, 'register'>, accountId?: string):
  Promise<PasskeyCheck> {
    const result = await this.#check(request, response, purpose, accountId)
    if (result.outcome === 'refused') {
      this.#o.emit(request, { type: 'passkey.failed', route, reason: result.reason, accountId: result.accountId ?? accountId, passkeyId: result.passkeyId })
      return { outcome: 'rejected', accountId: result.accountId ?? accountId }
    }
    this.#o.emit(request, { type: 'passkey.used', route, accountId: result.account.id, passkeyId: result.passkey.id })
    return result
  }

  async #check (request: FastifyRequest, response: AssertionJSON, purpose: Exclude<PasskeyPurpose, 'register'>, accountId: string | undefined) {
    const { store, storeCall, oneTimeTokens, accounts, emit } = this.#o
    const refuse = (reason: PasskeyFailureReason, owner?: string, passkeyId?: string) => ({ outcome: 'refused' as const, reason, accountId: owner, passkeyId })
    const clientData = readClientData(response.response?.clientDataJSON)
    // The challenge is used up by the first response that names it, whatever comes next.
    const bound = clientData === null ? null : await oneTimeTokens.consume(request, clientData.challenge, CHALLENGES[purpose])
    const challengeOk = bound !== null && (purpose === 'login' || bound.accountId === accountId)
    const passkey = await storeCall(request.log, 'passkeys.get', () => store.get(response.id))
    // An unknown credential gets the same verification, against a decoy key: one answer in one time.
    const publicKey = passkey?.publicKey ?? await (this.#decoy ??= decoyPublicKey())
    const verified = clientData === null ? null : await verifyAssertion(response, clientData.challenge, challengeOk, publicKey, this.rp)
    if (passkey === null) return refuse('unknown_credential')
    const owner = passkey.accountId
    if (!challengeOk) return refuse('challenge', owner, passkey.id)
    if (clientData!.crossOrigin) return refuse('cross_origin', owner, passkey.id)
    if (verified === null) return refuse('verification', owner, passkey.id)
    if (accountId !== undefined && owner !== accountId) return refuse('wrong_account', owner, passkey.id)
    // The credential's user handle must be its owner's: a sign-in names it, other purposes may.
    const userHandle = response.response.userHandle
    if ((purpose === 'login' || userHandle !== undefined) && userHandle !== await this.userHandle(request, owner)) return refuse('user_handle', owner, passkey.id)
    const account = await accounts.byId(request, owner)
    if (account === null || !account.active) return refuse('inactive_account', owner, passkey.id)

    const synced = passkey.backupEligible
    // W3C WebAuthn L3 §7.2: the counter does not grow when either is non-zero and the new one is not above the
    // stored one (so a clone that reports 0 after the original reported 5 is caught).
    if ((verified.counter !== 0 || passkey.counter !== 0) && verified.counter <= passkey.counter) {
      emit(request, { type: 'passkey.counter_regressed', accountId: owner, passkeyId: passkey.id, synced, storedCounter: passkey.counter, receivedCounter: verified.counter })
      if (!synced) return refuse('counter_regressed', owner, passkey.id)
    }
    const counter = Math.max(verified.counter, passkey.counter)
    const used = await storeCall(request.log, 'passkeys.use', () => store.use(passkey.id, passkey.counter, counter, verified.backedUp, Date.now()))
    if (!used) return refuse('counter_conflict', owner, passkey.id)
    return { outcome: 'accepted' as const, account, passkey, amr: synced ? AMR_SYNCED : AMR_DEVICE_BOUND }
  }
}
