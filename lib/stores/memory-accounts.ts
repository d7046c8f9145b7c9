import { randomUUID } from 'node:crypto'
import { normalizeEmail } from '../email.js'
import type { AccountStore, PasswordHashUpdate, StoredAccount } from './types.js'

export interface NewAccount {
  email: string
  passwordHash: string
  id?: string
  active?: boolean
  credentialVersion?: number
}

/**
 * Accounts in process memory, for tests, demos and single-process apps whose accounts are loaded at
 * start. Records are frozen and replaced on update, so callers can never change them in place.
 */
export class MemoryAccountStore implements AccountStore {
  readonly #byId = new Map<string, Readonly<StoredAccount>>()
  readonly #idByEmail = new Map<string, string>()

  /** Adds an account (the e-mail is normalised). Throws if the id or e-mail is taken. */
  add (account: NewAccount): Readonly<StoredAccount> {
    const email = normalizeEmail(account.email)
    const id = account.id ?? randomUUID()
    if (this.#idByEmail.has(email)) throw new Error(`An account with e-mail ${email} already exists`)
    if (this.#byId.has(id)) throw new Error(`An account with id ${id} already exists`)
    const stored = Object.freeze({
      id,
      email,
      passwordHash: account.passwordHash,
      active: account.active ?? true,
      credentialVersion: account.credentialVersion ?? 0
    })
    this.#byId.set(id, stored)
    this.#idByEmail.set(email, id)
    return stored
  }

  /** Activates or deactivates an account; its tokens stop working at the next request. */
  setActive (id: string, active: boolean): boolean {
    const account = this.#byId.get(id)
    if (account === undefined) return false
    this.#byId.set(id, Object.freeze({ ...account, active }))
    return true
  }

  async findByEmail (email: string): Promise<StoredAccount | null> {
    const id = this.#idByEmail.get(email)
    return id === undefined ? null : this.#byId.get(id) ?? null
  }

  async findById (id: string): Promise<StoredAccount | null> {
    return this.#byId.get(id) ?? null
  }

  async updatePasswordHash ({ id, expectedHash, newHash, advanceCredentialVersion }: PasswordHashUpdate): Promise<boolean> {
    const account = this.#byId.get(id)
    if (account === undefined || account.passwordHash !== expectedHash) return false
    this.#byId.set(id, Object.freeze({
      ...account,
      passwordHash: newHash,
      credentialVersion: account.credentialVersion + (advanceCredentialVersion ? 1 : 0)
    }))
    return true
  }
}
