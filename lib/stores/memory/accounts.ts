import { randomUUID } from 'node:crypto'
import { normalizeEmail } from '../email.js'
import { registerAtOnce } from '../at-once.js'
import type { AccountFields, AccountStore, EmailUpdate, NewAccountRecord, PasswordAuthAccount, PasswordHashUpdate, StoredAccount } from '../types.js'

/** A new account: the plugin's fields, and your own fields of PasswordAuthAccount (declaration merging). */
export type NewAccount = AccountFields & {
  email: string
  passwordHash: string
  id?: string
  active?: boolean
  credentialVersion?: number
}

/** A record and its hash-less view, both frozen, so findById hands out the view without copying. */
interface MemoryRecord {
  stored: Readonly<StoredAccount>
  view: Readonly<PasswordAuthAccount>
}

function record (stored: StoredAccount): MemoryRecord {
  const { passwordHash: _, ...view } = stored
  return { stored: Object.freeze(stored), view: Object.freeze(view) }
}

/**
 * Accounts in process memory, for tests, demos and single-process apps whose accounts are loaded at
 * start. Records are frozen and replaced on update, so callers can never change them in place.
 */
export class MemoryAccountStore implements AccountStore {
  readonly #byId = new Map<string, MemoryRecord>()
  readonly #idByEmail = new Map<string, string>()

  constructor () {
    // The guard's read answers in the same turn (at-once.ts).
    registerAtOnce(this, 'findById', MemoryAccountStore.prototype.findById, (id: string) => this.#byId.get(id)?.view ?? null)
  }

  /**
   * Adds an account (the e-mail is normalised). Every other property becomes a field of your own, shown on
   * `request.account`. Throws if the id or e-mail is taken.
   */
  add (account: NewAccount): Readonly<StoredAccount> {
    const { email: rawEmail, passwordHash, id = randomUUID(), active = true, credentialVersion = 0, ...fields } = account
    // A seed object with the plain password still on it would otherwise show it on request.account.
    if ('password' in fields) throw new TypeError('MemoryAccountStore.add: give passwordHash (see hashPassword()), not password')
    const email = normalizeEmail(rawEmail)
    if (this.#idByEmail.has(email)) throw new Error(`An account with e-mail ${email} already exists`)
    if (this.#byId.has(id)) throw new Error(`An account with id ${id} already exists`)
    const added = record({ ...fields, id, email, passwordHash, active, credentialVersion })
    this.#byId.set(id, added)
    this.#idByEmail.set(email, id)
    return added.stored
  }

  /** A verified registration's account; null if the e-mail is taken. The fields become fields of your own. */
  async create ({ email, passwordHash, fields }: NewAccountRecord): Promise<StoredAccount | null> {
    // No await before the check and the insert: of concurrent creations of one address one wins.
    if (this.#idByEmail.has(normalizeEmail(email))) return null
    return this.add({ ...fields, email, passwordHash })
  }

  /**
   * Activates or deactivates an account. Deactivation advances the credential version, so the account's
   * tokens stop working at the next request and stay dead after a reactivation.
   */
  setActive (id: string, active: boolean): boolean {
    const stored = this.#byId.get(id)?.stored
    if (stored === undefined) return false
    const ended = stored.active && !active ? 1 : 0
    this.#byId.set(id, record({ ...stored, active, credentialVersion: stored.credentialVersion + ended }))
    return true
  }

  async findByEmail (email: string): Promise<StoredAccount | null> {
    const id = this.#idByEmail.get(email)
    return id === undefined ? null : this.#byId.get(id)?.stored ?? null
  }

  async findById (id: string): Promise<PasswordAuthAccount | null> {
    return this.#byId.get(id)?.view ?? null
  }

  async updatePasswordHash ({ id, expectedHash, newHash, advanceCredentialVersion }: PasswordHashUpdate): Promise<boolean> {
    const stored = this.#byId.get(id)?.stored
    if (stored === undefined || stored.passwordHash !== expectedHash) return false
    this.#byId.set(id, record({
      ...stored,
      passwordHash: newHash,
      credentialVersion: stored.credentialVersion + (advanceCredentialVersion ? 1 : 0)
    }))
    return true
  }

  async updateEmail ({ id, expectedEmail, expectedCredentialVersion, newEmail }: EmailUpdate): Promise<boolean> {
    // No await before the checks and the write: of concurrent changes one wins.
    const stored = this.#byId.get(id)?.stored
    const email = normalizeEmail(newEmail)
    if (stored === undefined || stored.email !== expectedEmail || stored.credentialVersion !== expectedCredentialVersion) return false
    if (this.#idByEmail.has(email) && this.#idByEmail.get(email) !== id) return false
    this.#idByEmail.delete(stored.email)
    this.#idByEmail.set(email, id)
    this.#byId.set(id, record({ ...stored, email }))
    return true
  }

  async delete (id: string): Promise<boolean> {
    const stored = this.#byId.get(id)?.stored
    if (stored === undefined) return false
    this.#byId.delete(id)
    this.#idByEmail.delete(stored.email)
    return true
  }
}
