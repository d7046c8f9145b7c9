import { createHash, createHmac, randomBytes } from 'node:crypto'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { StoreCall } from '../stores/store-call.js'
import type { OneTimeToken, OneTimeTokenStore, PasswordAuthAccount } from '../stores/types.js'
import type { KeyRing } from './key-ring.js'

// <slot: 128 bits, derived from the purpose and the account>.<secret: 256 random bits>
const FORMAT = /^[\w-]{22}\.[\w-]{43}$/
// 32 random bytes, base64url without padding.
const CHALLENGE_FORMAT = /^[\w-]{43}$/

/**
 * One-time tokens for links sent by e-mail (password reset, e-mail verification). The store keeps, per
 * slot, an HMAC of the token with a key derived from the signing key: a copy of the database holds nothing
 * that works as a token. A reset's slot is derived from the account, so a new token replaces the earlier one.
 * Tokens are made under the first key and looked up under every configured one: a rotation, or instances
 * holding the keys in another order, end no link and no challenge in flight (contract §5).
 */
export class OneTimeTokens {
  readonly #store: OneTimeTokenStore
  readonly #keys: readonly Buffer[]
  readonly #slotKey: Buffer
  readonly #storeCall: StoreCall

  constructor (store: OneTimeTokenStore, keyRing: KeyRing, storeCall: StoreCall) {
    this.#store = store
    const { all } = keyRing.derive('one-time-token')
    this.#keys = all.map(({ key }) => key)
    // A reset's slot comes from the key whose kid sorts first, not the first configured: instances holding
    // the keys in another order replace each other's link, as one instance does.
    this.#slotKey = [...all].sort((a, b) => a.kid < b.kid ? -1 : 1)[0]!.key
    this.#storeCall = storeCall
  }

  /** A new token for `account`, replacing its earlier one of that purpose; it lives `ttlMs`. */
  async issue (request: { log: FastifyBaseLogger }, purpose: string, account: PasswordAuthAccount, ttlMs: number, fields?: Record<string, unknown>): Promise<string> {
    return await this.#put(request, this.#accountSlot(purpose, account.id),
      { purpose, accountId: account.id, email: account.email, credentialVersion: account.credentialVersion, ...(fields === undefined ? {} : { fields }) }, ttlMs)
  }

  /**
   * A token in the slot of the account, purpose and `subject` together (an e-mail revert: one per address the
   * account left, so a later change cannot replace the owner's way back).
   */
  async issueFor (request: { log: FastifyBaseLogger }, purpose: string, subject: string, account: PasswordAuthAccount, ttlMs: number, fields: Record<string, unknown>): Promise<string> {
    return await this.#put(request, this.#accountSlot(purpose, `${account.id}\0${subject}`),
      { purpose, accountId: account.id, email: account.email, credentialVersion: account.credentialVersion, fields }, ttlMs)
  }

  /**
   * A pending registration's token: a slot of its own (an address may have several pending registrations;
   * the first verified wins), holding the password hash and the host's fields.
   */
  async issueRegistration (request: FastifyRequest, email: string, passwordHash: string, fields: Record<string, unknown>, ttlMs: number): Promise<string> {
    return await this.#put(request, randomBytes(16).toString('base64url'), { purpose: 'verify_email', accountId: '', email, credentialVersion: 0, passwordHash, fields }, ttlMs)
  }

  /** A second-factor challenge after a correct password (LoginMfa): a slot of its own, so logins on two devices do not clash. */
  async issueMfa (request: FastifyRequest, account: PasswordAuthAccount, ttlMs: number): Promise<string> {
    return await this.#put(request, randomBytes(16).toString('base64url'),
      { purpose: 'mfa_login', accountId: account.id, email: account.email, credentialVersion: account.credentialVersion }, ttlMs)
  }

  /**
   * A WebAuthn challenge (contract §18): 32 random bytes, base64url, bound to `purpose` and to `account`
   * (none for a sign-in's). Its slot is derived from the challenge itself, so a response names its own.
   */
  async issueChallenge (request: FastifyRequest, purpose: string, account: PasswordAuthAccount | null, ttlMs: number): Promise<string> {
    const challenge = randomBytes(32).toString('base64url')
    const record = { purpose, accountId: account?.id ?? '', email: account?.email ?? '', credentialVersion: account?.credentialVersion ?? 0 }
    await this.#storeCall(request.log, 'oneTimeTokens.put', async () => { await this.#store.put(this.#challengeSlot(challenge), this.#hash(challenge), record, ttlMs) })
    return challenge
  }

  /** Uses a challenge up, whatever comes next: resolves what it was bound to for exactly one of concurrent callers; null for anything else. */
  async consumeChallenge (request: FastifyRequest, challenge: string, purpose: string): Promise<OneTimeToken | null> {
    if (!CHALLENGE_FORMAT.test(challenge)) return null
    // Under every key that still verifies: a challenge issued just before a key rotation still works.
    for (const key of this.#keys) {
      const consumed = await this.#storeCall(request.log, 'oneTimeTokens.consume', () => this.#store.consume(this.#challengeSlot(challenge), this.#hash(challenge, key), purpose))
      if (consumed !== null) return consumed
    }
    return null
  }

  #challengeSlot (challenge: string): string {
    return this.#mac(`challenge\0${challenge}`, this.#slotKey).subarray(0, 16).toString('base64url')
  }

  /**
   * The attempt-store key that counts wrong codes sent with this token (it dies after 5); null for a malformed
   * token. A plain hash (the token holds 256 random bits, so it reverses to nothing): every instance counts on
   * one key whatever signing keys it holds.
   */
  codeAttemptsKey (token: string): string | null {
    return FORMAT.test(token) ? `code.${createHash('sha256').update(`fastify-password-auth code-attempts\0${token}`).digest('base64url').slice(0, 32)}` : null
  }

  /** What a live token of `purpose` stands for; null for anything else. Changes nothing. */
  async find (request: FastifyRequest, token: string, purpose: string): Promise<OneTimeToken | null> {
    if (!FORMAT.test(token)) return null
    for (const key of this.#keys) {
      const found = await this.#storeCall(request.log, 'oneTimeTokens.find', () => this.#store.find(token.slice(0, 22), this.#hash(token, key), purpose))
      if (found !== null) return found
    }
    return null
  }

  /** Uses the token up: resolves what it stood for to exactly one of concurrent callers. */
  async consume (request: FastifyRequest, token: string, purpose: string): Promise<OneTimeToken | null> {
    if (!FORMAT.test(token)) return null
    // The slot holds one hash, made under one key: of the keys tried, only that one can consume it.
    for (const key of this.#keys) {
      const consumed = await this.#storeCall(request.log, 'oneTimeTokens.consume', () => this.#store.consume(token.slice(0, 22), this.#hash(token, key), purpose))
      if (consumed !== null) return consumed
    }
    return null
  }

  /**
   * Uses up a token that stands with others of its account and purpose (e-mail revert links): only the earliest
   * issued live one works, and it ends every other (OneTimeTokenStore.consumeFirst). Needs a store with consumeFirst().
   */
  async consumeFirst (request: FastifyRequest, token: string, purpose: string): Promise<OneTimeToken | null> {
    const store = this.#store
    if (!FORMAT.test(token) || store.consumeFirst === undefined) return null
    for (const key of this.#keys) {
      const consumed = await this.#storeCall(request.log, 'oneTimeTokens.consumeFirst', () => store.consumeFirst!(token.slice(0, 22), this.#hash(token, key), purpose))
      if (consumed !== null) return consumed
    }
    return null
  }

  /**
   * Keeps a note for the account under `purpose`, one per `subject` (a later note of the same subject replaces it),
   * that lives `ttlMs` and holds the subject as its e-mail: not a token, nothing can use it (e-mail addresses the
   * account left, for its deletion notice). Read back with notes(); a deleted account's go with its tokens.
   */
  async note (caller: { log: FastifyBaseLogger }, purpose: string, accountId: string, subject: string, ttlMs: number): Promise<void> {
    const slot = this.#accountSlot(purpose, `${accountId}\0${subject}`)
    await this.#storeCall(caller.log, 'oneTimeTokens.put', async () => {
      await this.#store.put(slot, randomBytes(32).toString('base64url'), { purpose, accountId, email: subject, credentialVersion: 0 }, ttlMs)
    })
  }

  /** The subjects of the account's live notes of `purpose`; none with a store without list(). */
  async notes (caller: { log: FastifyBaseLogger }, purpose: string, accountId: string): Promise<string[]> {
    const store = this.#store
    if (store.list === undefined) return []
    return (await this.#storeCall(caller.log, 'oneTimeTokens.list', () => store.list!(accountId, purpose))).map(({ email }) => email)
  }

  /**
   * Puts a consumed token back, standing for `record` again until `expiresAt` (epoch ms), when a step after the
   * consume failed and the token's holder should be able to try again. Nothing if it has expired meanwhile.
   */
  async putBack (request: { log: FastifyBaseLogger }, token: string, record: OneTimeToken, expiresAt: number): Promise<void> {
    const ttlMs = expiresAt - Date.now()
    if (!FORMAT.test(token) || ttlMs < 1) return
    await this.#storeCall(request.log, 'oneTimeTokens.put', async () => { await this.#store.put(token.slice(0, 22), this.#hash(token), record, ttlMs) })
  }

  /** Removes the account's tokens of these purposes: those issue() and issueFor() made, one slot each. Needs a store with remove(). */
  async forget (caller: { log: FastifyBaseLogger }, accountId: string, purposes: ReadonlyArray<string | [purpose: string, subject: string]>): Promise<void> {
    const store = this.#store
    if (store.remove === undefined) return
    for (const purpose of purposes) {
      const slot = typeof purpose === 'string' ? this.#accountSlot(purpose, accountId) : this.#accountSlot(purpose[0], `${accountId}\0${purpose[1]}`)
      await this.#storeCall(caller.log, 'oneTimeTokens.remove', async () => { await store.remove!(slot) })
    }
  }

  /**
   * Removes every token of a deleted account with a store that has removeAll(): login and passkey challenges and the
   * revert links of every address it left included. Otherwise forget() of `purposes`; the rest die with the account
   * (each is checked against it) and expire by themselves.
   */
  async forgetAccount (caller: { log: FastifyBaseLogger }, accountId: string, purposes: ReadonlyArray<string | [purpose: string, subject: string]>): Promise<void> {
    const store = this.#store
    if (store.removeAll === undefined) return await this.forget(caller, accountId, purposes)
    await this.#storeCall(caller.log, 'oneTimeTokens.removeAll', async () => { await store.removeAll!(accountId) })
  }

  /** A slot derived from the account: under the key whose kid sorts first, so instances holding the keys in another order agree. */
  #accountSlot (purpose: string, accountId: string): string {
    return this.#mac(`slot\0${purpose}\0${accountId}`, this.#slotKey).subarray(0, 16).toString('base64url')
  }

  /** A new token in `slot` (22 characters) standing for `record`; the store gets only its HMAC. */
  async #put (request: { log: FastifyBaseLogger }, slot: string, record: OneTimeToken, ttlMs: number): Promise<string> {
    const token = `${slot}.${randomBytes(32).toString('base64url')}`
    await this.#storeCall(request.log, 'oneTimeTokens.put', async () => { await this.#store.put(slot, this.#hash(token), record, ttlMs) })
    return token
  }

  #hash (token: string, key = this.#keys[0]!): string {
    return this.#mac(`token\0${token}`, key).toString('base64url')
  }

  #mac (text: string, key = this.#keys[0]!): Buffer {
    return createHmac('sha256', key).update(text).digest()
  }
}
