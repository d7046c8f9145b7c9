import { redisCommands, type RedisClient, type RedisCommands } from './client.js'
import { scripts } from './lua.js'
import type { PasskeyAddResult, PasskeyStore, StoredPasskey } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface RedisPasskeyStoreOptions {
  /** Your ioredis or node-redis client (or cluster); the store never connects or disconnects it. */
  client: RedisClient
  /** Key prefix (default 'fastify-password-auth:passkeys:'). */
  prefix?: string
}

// Per credential, a hash `c:{<credential id>}` (a: account, k: public key, n: counter, e/b: backup eligible /
// backed up, t: transports, m: name, c/u: created / last used; x while an add has not finished). Per account, a
// sorted set `a:{<account>}` of its credential ids by creation time, its generation `g:{<account>}` and its user
// handle `h:{<account>}` (one slot). Every script runs on one credential's key or on one account's keys: atomic,
// and Cluster-safe.
const SCRIPTS = {
  // KEYS[1] the credential; ARGV: the fields, as HSET takes them.
  create: `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`,
  // Ends an add: the credential signs in from now on, unless a removal deleted it meanwhile. ARGV: account.
  finish: `if redis.call('HGET', KEYS[1], 'a') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'x')
return 1`,
  use: `local n = redis.call('HGET', KEYS[1], 'n')
if not n or tonumber(n) ~= tonumber(ARGV[1]) or redis.call('HEXISTS', KEYS[1], 'x') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'n', ARGV[2], 'b', ARGV[3], 'u', ARGV[4])
return 1`,
  // Deletes the credential if `account` owns it: 1 if it had signed in (a finished add), 2 if not.
  removeOwned: `if redis.call('HGET', KEYS[1], 'a') ~= ARGV[1] then return 0 end
local unfinished = redis.call('HEXISTS', KEYS[1], 'x')
redis.call('DEL', KEYS[1])
return 1 + unfinished`,
  userHandle: `redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`
} as const

// On the account's set (KEYS[1]) and its generation (KEYS[2]).
const ACCOUNT_SCRIPTS = {
  // ARGV: id, createdAt, max, generation.
  reserve: `if tonumber(redis.call('GET', KEYS[2]) or '0') ~= tonumber(ARGV[4]) then return 'outrun' end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 'duplicate' end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 'limit' end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 'added'`,
  // Whether the reservation of id (ARGV[1]) made in generation ARGV[2] still stands.
  stands: `if tonumber(redis.call('GET', KEYS[2]) or '0') ~= tonumber(ARGV[2]) then return 0 end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
return 0`,
  // Advances the generation; answers the ids to remove.
  advance: `redis.call('INCR', KEYS[2])
return redis.call('ZRANGE', KEYS[1], 0, -1)`
} as const

const SHAS = scripts({ ...SCRIPTS, ...ACCOUNT_SCRIPTS })
// How many of a script's leading arguments are keys: the account scripts take the account's set and generation.
const KEYS: Record<keyof typeof SHAS, number> = { ...mapValues(SCRIPTS, 1), ...mapValues(ACCOUNT_SCRIPTS, 2) }

function mapValues<K extends string> (record: Record<K, unknown>, value: number): Record<K, number> {
  return Object.fromEntries(Object.keys(record).map((key) => [key, value])) as Record<K, number>
}

const OPTIONS: StoreOptionRules = { client: 'client', prefix: 'prefix' }

/**
 * Passkeys in Redis, shared by every instance. An add takes a place in the account's set, refused past `max` or
 * once the account's generation moved on; then creates the credential, unfinished (refused if its id exists,
 * freeing the place); then checks that the place still stands in that generation, and finishes the credential,
 * which only then signs in. A removal of all advances the generation first, then deletes every credential the set
 * lists: an add that raced it either finds its place gone or its credential deleted, and never finishes. A
 * credential is never signing in without being listed for its owner.
 */
export class RedisPasskeyStore implements PasskeyStore {
  readonly #client: RedisCommands
  readonly #prefix: string

  constructor (options: RedisPasskeyStoreOptions) {
    checkStoreOptions('RedisPasskeyStore', options, OPTIONS)
    const { client, prefix = 'fastify-password-auth:passkeys:' } = options
    this.#client = redisCommands('RedisPasskeyStore', client)
    this.#prefix = prefix
  }

  async userHandle (accountId: string, candidate: string): Promise<string> {
    return await this.#run('userHandle', `${this.#prefix}h:{${accountId}}`, candidate) as string
  }

  async generation (accountId: string): Promise<number> {
    return Number(await this.#client.get(this.#generationKey(accountId)) ?? 0)
  }

  async add (passkey: StoredPasskey, max: number, generation: number): Promise<PasskeyAddResult> {
    const account = [this.#accountKey(passkey.accountId), this.#generationKey(passkey.accountId)]
    const reserved = await this.#run('reserve', ...account, passkey.id, passkey.createdAt, max, generation) as PasskeyAddResult
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
      u: passkey.lastUsedAt ?? '',
      x: '1'
    }
    const credential = this.#credentialKey(passkey.id)
    if (await this.#run('create', credential, ...Object.entries(fields).flat()) !== 1) {
      await this.#client.zrem(account[0]!, passkey.id)
      return 'duplicate'
    }
    if (await this.#run('stands', ...account, passkey.id, generation) === 1 && await this.#run('finish', credential, passkey.accountId) === 1) return 'added'
    // A removal of all came first: what is left of this add goes too.
    await this.#run('removeOwned', credential, passkey.accountId)
    await this.#client.zrem(account[0]!, passkey.id)
    return 'outrun'
  }

  async get (credentialId: string): Promise<StoredPasskey | null> {
    const r = await this.#client.hgetall(this.#credentialKey(credentialId))
    // An unfinished add signs nobody in.
    if (r.a === undefined || r.x !== undefined) return null
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
    const ids = await this.#client.zrange(this.#accountKey(accountId), '0', '-1')
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
    // The generation first: an add that has not taken its place yet is refused from now on.
    const ids = await this.#run('advance', this.#accountKey(accountId), this.#generationKey(accountId)) as string[]
    const removed = await Promise.all(ids.map(async (id) => await this.#run('removeOwned', this.#credentialKey(id), accountId)))
    if (ids.length > 0) await this.#client.zrem(this.#accountKey(accountId), ...ids)
    return removed.filter((result) => result === 1).length
  }

  /** The passkeys first (removeAll), then the handle and the generation: a handle without passkeys signs nobody in. */
  async forget (accountId: string): Promise<number> {
    const removed = await this.removeAll(accountId)
    await this.#client.del(`${this.#prefix}h:{${accountId}}`, this.#generationKey(accountId))
    return removed
  }

  async #run (script: keyof typeof SHAS, ...keysAndArgs: Array<string | number>): Promise<unknown> {
    const keys = KEYS[script]
    return await this.#client.run(SHAS[script], keysAndArgs.slice(0, keys) as string[], keysAndArgs.slice(keys))
  }

  #credentialKey (credentialId: string): string {
    return `${this.#prefix}c:{${credentialId}}`
  }

  #accountKey (accountId: string): string {
    return `${this.#prefix}a:{${accountId}}`
  }

  #generationKey (accountId: string): string {
    return `${this.#prefix}g:{${accountId}}`
  }
}
