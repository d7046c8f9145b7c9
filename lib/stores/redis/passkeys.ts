import type { Cluster, Redis } from 'ioredis'
import { defineOneKeyScripts } from './lua.js'
import type { PasskeyAddResult, PasskeyStore, StoredPasskey } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface RedisPasskeyStoreOptions {
  /** Your ioredis client (or Cluster); the store never connects or disconnects it. */
  client: Redis | Cluster
  /** Key prefix (default 'fastify-password-auth:passkeys:'). */
  prefix?: string
}

// Per credential, a hash `c:{<credential id>}` (a: account, k: public key, n: counter, e/b: backup eligible /
// backed up, t: transports, m: name, c/u: created / last used). Per account, a sorted set `a:{<account>}` of
// its credential ids by creation time, and its user handle `h:{<account>}` (one slot with the set). Every
// change is one Lua script on one key: atomic, and Cluster-safe.
const SCRIPTS = {
  // KEYS[1] the account's set; ARGV: id, createdAt, max.
  reserve: `if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 'duplicate' end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 'limit' end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 'added'`,
  // KEYS[1] the credential; ARGV: the fields, as HSET takes them.
  create: `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`,
  use: `local n = redis.call('HGET', KEYS[1], 'n')
if not n or tonumber(n) ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'n', ARGV[2], 'b', ARGV[3], 'u', ARGV[4])
return 1`,
  // Deletes the credential if `account` owns it.
  removeOwned: `if redis.call('HGET', KEYS[1], 'a') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`,
  userHandle: `redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`
} as const

type Script = keyof typeof SCRIPTS
const NAMESPACE = 'fastifyPasswordAuthPasskey'
const commandName = (script: Script): string => `${NAMESPACE}_${script}`

type ScriptedClient = Record<string, (key: string, ...args: Array<string | number>) => Promise<unknown>> & {
  hgetall: (key: string) => Promise<Record<string, string>>
  zrange: (key: string, start: number, stop: number) => Promise<string[]>
  zrem: (key: string, ...members: string[]) => Promise<number>
  del: (key: string) => Promise<number>
}

const OPTIONS: StoreOptionRules = { client: 'client', prefix: 'prefix' }

/**
 * Passkeys in Redis, shared by every instance. An add first takes a place in the account's set (refused
 * past `max`), then creates the credential (refused if its id exists, freeing the place): a credential is
 * never stored without being listed for its owner.
 */
export class RedisPasskeyStore implements PasskeyStore {
  readonly #client: ScriptedClient
  readonly #prefix: string

  constructor (options: RedisPasskeyStoreOptions) {
    checkStoreOptions('RedisPasskeyStore', options, OPTIONS)
    const { client, prefix = 'fastify-password-auth:passkeys:' } = options
    defineOneKeyScripts(client, NAMESPACE, SCRIPTS)
    this.#client = client as unknown as ScriptedClient
    this.#prefix = prefix
  }

  async userHandle (accountId: string, candidate: string): Promise<string> {
    return await this.#run('userHandle', `${this.#prefix}h:{${accountId}}`, candidate) as string
  }

  async add (passkey: StoredPasskey, max: number): Promise<PasskeyAddResult> {
    const set = this.#accountKey(passkey.accountId)
    const reserved = await this.#run('reserve', set, passkey.id, passkey.createdAt, max) as PasskeyAddResult
    if (reserved !== 'added') return reserved
    const fields = {
      a: passkey.accountId,
      k: passkey.publicKey,
      n: passkey.counter,
      e: passkey.backupEligible ? '1' : '0',
      b: passkey.backedUp ? '1' : '0',
      t: passkey.transports.join(' '),
      m: passkey.name,
      c: passkey.createdAt,
      u: passkey.lastUsedAt ?? ''
    }
    if (await this.#run('create', this.#credentialKey(passkey.id), ...Object.entries(fields).flat()) === 1) return 'added'
    await this.#client.zrem(set, passkey.id)
    return 'duplicate'
  }

  async get (credentialId: string): Promise<StoredPasskey | null> {
    const r = await this.#client.hgetall(this.#credentialKey(credentialId))
    if (r.a === undefined) return null
    return {
      id: credentialId,
      accountId: r.a,
      publicKey: r.k!,
      counter: Number(r.n),
      backupEligible: r.e === '1',
      backedUp: r.b === '1',
      transports: r.t === '' || r.t === undefined ? [] : r.t.split(' '),
      name: r.m!,
      createdAt: Number(r.c),
      lastUsedAt: r.u === '' || r.u === undefined ? null : Number(r.u)
    }
  }

  async list (accountId: string): Promise<StoredPasskey[]> {
    const ids = await this.#client.zrange(this.#accountKey(accountId), 0, -1)
    const passkeys = await Promise.all(ids.map(async (id) => await this.get(id)))
    // A place taken by an add that never finished, or an id another account holds now, is not the account's.
    return passkeys.filter((passkey): passkey is StoredPasskey => passkey?.accountId === accountId)
  }

  async use (credentialId: string, expectedCounter: number, counter: number, backedUp: boolean, usedAt: number): Promise<boolean> {
    return await this.#run('use', this.#credentialKey(credentialId), expectedCounter, counter, backedUp ? '1' : '0', usedAt) === 1
  }

  async remove (accountId: string, credentialId: string): Promise<boolean> {
    // The credential first: once it is gone it signs in no more, whatever happens to the set.
    const removed = await this.#run('removeOwned', this.#credentialKey(credentialId), accountId) === 1
    if (removed) await this.#client.zrem(this.#accountKey(accountId), credentialId)
    return removed
  }

  async removeAll (accountId: string): Promise<number> {
    const ids = await this.#client.zrange(this.#accountKey(accountId), 0, -1)
    const removed = await Promise.all(ids.map(async (id) => await this.#run('removeOwned', this.#credentialKey(id), accountId) === 1))
    if (ids.length > 0) await this.#client.zrem(this.#accountKey(accountId), ...ids)
    return removed.filter(Boolean).length
  }

  /** The passkeys first (removeAll), then the handle: a handle without passkeys signs nobody in. */
  async forget (accountId: string): Promise<number> {
    const removed = await this.removeAll(accountId)
    await this.#client.del(`${this.#prefix}h:{${accountId}}`)
    return removed
  }

  async #run (script: Script, key: string, ...args: Array<string | number>): Promise<unknown> {
    return await this.#client[commandName(script)]!(key, ...args)
  }

  #credentialKey (credentialId: string): string {
    return `${this.#prefix}c:{${credentialId}}`
  }

  #accountKey (accountId: string): string {
    return `${this.#prefix}a:{${accountId}}`
  }
}
