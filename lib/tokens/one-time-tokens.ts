import { createHmac, randomBytes } from 'node:crypto'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { StoreCall } from '../stores/store-call.js'
import type { OneTimeToken, OneTimeTokenStore, PasswordAuthAccount } from '../stores/types.js'
import type { KeyRing } from './key-ring.js'
import { SLOT_RULES, type TokenPurpose } from './purposes.js'

/** What a token stands for of its account. */
export type TokenAccount = Pick<PasswordAuthAccount, 'id' | 'email' | 'credentialVersion'>

/** What issue() keeps besides the account. */
export interface IssueExtras {
  /** A `subject` slot's subject (an e-mail revert: the address left). */
  subject?: string
  /** What the token carries for its route (the new address of an e-mail change, a registration's own fields). */
  fields?: Record<string, unknown>
  /** A pending registration's password hash. */
  passwordHash?: string
}

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

  /**
   * A new token of `purpose` standing for `account` (a pending registration has none yet: id '', its address, version
   * 0), that lives `ttlMs`, in the slot its purpose's SLOT_RULES give: a token of an `account` slot replaces the
   * account's earlier one of that purpose, one of a `subject` slot the earlier one of that subject; a `challenge` is
   * 32 random bytes, base64url (WebAuthn), none of the others' format.
   */
  async issue (caller: { log: FastifyBaseLogger }, purpose: TokenPurpose, account: TokenAccount | null, ttlMs: number, { subject, fields, passwordHash }: IssueExtras = {}): Promise<string> {
    const accountId = account?.id ?? ''
    const record: OneTimeToken = { purpose, accountId, email: account?.email ?? '', credentialVersion: account?.credentialVersion ?? 0 }
    if (passwordHash !== undefined) record.passwordHash = passwordHash
    if (fields !== undefined) record.fields = fields
    switch (SLOT_RULES[purpose]) {
      case 'challenge': {
        const challenge = randomBytes(32).toString('base64url')
        await this.#storeCall(caller.log, 'oneTimeTokens.put', async () => { await this.#store.put(this.#challengeSlot(challenge), this.#hash(challenge), record, ttlMs) })
        return challenge
      }
      // A slot of its own: an address may have several pending registrations (the first verified wins), and
      // logins on two devices do not clash.
      case 'own': return await this.#put(caller, randomBytes(16).toString('base64url'), record, ttlMs)
      case 'account': return await this.#put(caller, this.#accountSlot(purpose, accountId), record, ttlMs)
      case 'subject': {
        if (subject === undefined) throw new TypeError(`a ${purpose} token needs a subject`)
        return await this.#put(caller, this.#accountSlot(purpose, `${accountId}\0${subject}`), record, ttlMs)
      }
    }
  }

  /** The slot a token of `purpose` names, if it has that purpose's format; null otherwise. */
  #slotOf (token: string, purpose: TokenPurpose): string | null {
    if (SLOT_RULES[purpose] === 'challenge') return CHALLENGE_FORMAT.test(token) ? this.#challengeSlot(token) : null
    return FORMAT.test(token) ? token.slice(0, 22) : null
  }

  #challengeSlot (challenge: string): string {
    return this.#mac(`challenge\0${challenge}`, this.#slotKey).subarray(0, 16).toString('base64url')
  }

  /** What a live token of `purpose` stands for; null for anything else. Changes nothing. */
  async find (request: FastifyRequest, token: string, purpose: TokenPurpose): Promise<OneTimeToken | null> {
    const slot = this.#slotOf(token, purpose)
    if (slot === null) return null
    for (const key of this.#keys) {
      const found = await this.#storeCall(request.log, 'oneTimeTokens.find', () => this.#store.find(slot, this.#hash(token, key), purpose))
      if (found !== null) return found
    }
    return null
  }

  /**
   * Uses the token up, whatever comes next: resolves what it stood for to exactly one of concurrent callers; null for
   * anything else. A challenge issued just before a key rotation still works.
   */
  async consume (request: FastifyRequest, token: string, purpose: TokenPurpose): Promise<OneTimeToken | null> {
    const slot = this.#slotOf(token, purpose)
    if (slot === null) return null
    // The slot holds one hash, made under one key: of the keys tried, only that one can consume it.
    for (const key of this.#keys) {
      const consumed = await this.#storeCall(request.log, 'oneTimeTokens.consume', () => this.#store.consume(slot, this.#hash(token, key), purpose))
      if (consumed !== null) return consumed
    }
    return null
  }

  /**
   * Uses up a token that stands with others of its account and purpose (e-mail revert links): only the earliest
   * issued live one works, and it ends every other (OneTimeTokenStore.consumeFirst). Needs a store with consumeFirst().
   */
  async consumeFirst (request: FastifyRequest, token: string, purpose: TokenPurpose): Promise<OneTimeToken | null> {
    const store = this.#store
    const slot = this.#slotOf(token, purpose)
    if (slot === null || store.consumeFirst === undefined) return null
    for (const key of this.#keys) {
      const consumed = await this.#storeCall(request.log, 'oneTimeTokens.consumeFirst', () => store.consumeFirst!(slot, this.#hash(token, key), purpose))
      if (consumed !== null) return consumed
    }
    return null
  }

  /**
   * Keeps a note for the account under `purpose`, one per `subject` (a later note of the same subject replaces it),
   * that lives `ttlMs` and holds the subject as its e-mail: not a token, nothing can use it (e-mail addresses the
   * account left, for its deletion notice). Read back with notes(); a deleted account's go with its tokens.
   */
  async note (caller: { log: FastifyBaseLogger }, purpose: TokenPurpose, accountId: string, subject: string, ttlMs: number): Promise<void> {
    const slot = this.#accountSlot(purpose, `${accountId}\0${subject}`)
    await this.#storeCall(caller.log, 'oneTimeTokens.put', async () => {
      await this.#store.put(slot, randomBytes(32).toString('base64url'), { purpose, accountId, email: subject, credentialVersion: 0 }, ttlMs)
    })
  }

  /** The subjects of the account's live notes of `purpose`; none with a store without list(). */
  async notes (caller: { log: FastifyBaseLogger }, purpose: TokenPurpose, accountId: string): Promise<string[]> {
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

  /** Removes the account's tokens of these purposes (of `account` and `subject` slots), one slot each. Needs a store with remove(). */
  async forget (caller: { log: FastifyBaseLogger }, accountId: string, purposes: ReadonlyArray<TokenPurpose | [purpose: TokenPurpose, subject: string]>): Promise<void> {
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
  async forgetAccount (caller: { log: FastifyBaseLogger }, accountId: string, purposes: ReadonlyArray<TokenPurpose | [purpose: TokenPurpose, subject: string]>): Promise<void> {
    const store = this.#store
    if (store.removeAll === undefined) return await this.forget(caller, accountId, purposes)
    await this.#storeCall(caller.log, 'oneTimeTokens.removeAll', async () => { await store.removeAll!(accountId) })
  }

  /** A slot derived from the account: under the key whose kid sorts first, so instances holding the keys in another order agree. */
  #accountSlot (purpose: TokenPurpose, accountId: string): string {
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
