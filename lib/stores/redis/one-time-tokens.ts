import { redisCommands, type RedisClient, type RedisCommands } from './client.js'
import { scripts } from './lua.js'
import type { OneTimeToken, OneTimeTokenStore } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface RedisOneTimeTokenStoreOptions {
  /** Your ioredis or node-redis client (or cluster); the store never connects or disconnects it. */
  client: RedisClient
  /** Key prefix (default 'fastify-password-auth:one-time:'). */
  prefix?: string
}

// One hash per slot (h: the token's keyed hash, p: purpose, a: account id, e: e-mail, v: credential
// version, w: a pending registration's password hash, f: its fields as JSON, x: when it expires, in epoch
// milliseconds of Redis's clock), expiring with the token on Redis's clock. One key per script: Redis Cluster works.
const PUT = `redis.call('DEL', KEYS[1])
local now = redis.call('TIME')
local expires = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[6])
redis.call('HSET', KEYS[1], 'h', ARGV[1], 'p', ARGV[2], 'a', ARGV[3], 'e', ARGV[4], 'v', ARGV[5], 'w', ARGV[7], 'f', ARGV[8], 'x', expires)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1`
const CONSUME = `local token = redis.call('HMGET', KEYS[1], 'h', 'p', 'a', 'e', 'v', 'w', 'f')
if token[1] ~= ARGV[1] or token[2] ~= ARGV[2] then return false end
redis.call('DEL', KEYS[1])
return token`

// The account's index, a set of its slots (KEYS[1]), lives as long as its longest-lived token: written before the
// token, so every token of an account is in it. The removal deletes a slot only while it still holds the account's.
const INDEX = `redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`
const REMOVE_OWN = `if redis.call('HGET', KEYS[1], 'a') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`
// consumeFirst's gate, on the account's index (KEYS[1]): the caller's slot (ARGV[1]) leaves it with the rest of its
// group (the other ARGV), only if it is still there. Of concurrent calls on one group, the first takes them all.
const CLAIM = `if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('SREM', KEYS[1], unpack(ARGV))
return 1`

const SHAS = scripts({ put: PUT, consume: CONSUME, index: INDEX, removeOwn: REMOVE_OWN, claim: CLAIM })

type Fields = [string | null, string | null, string | null, string | null, string | null, string | null, string | null]

function tokenOf ([, purpose, accountId, email, version, passwordHash, fields]: Fields): OneTimeToken {
  const token: OneTimeToken = { purpose: purpose!, accountId: accountId!, email: email!, credentialVersion: Number(version) }
  if (passwordHash !== null && passwordHash !== '') token.passwordHash = passwordHash
  if (fields !== null && fields !== '') token.fields = JSON.parse(fields)
  return token
}

const OPTIONS: StoreOptionRules = { client: 'client', prefix: 'prefix' }

/** One-time tokens in Redis, shared by every instance; consume is one Lua script (one winner). */
export class RedisOneTimeTokenStore implements OneTimeTokenStore {
  readonly #client: RedisCommands
  readonly #prefix: string

  constructor (options: RedisOneTimeTokenStoreOptions) {
    checkStoreOptions('RedisOneTimeTokenStore', options, OPTIONS)
    const { client, prefix = 'fastify-password-auth:one-time:' } = options
    this.#client = redisCommands('RedisOneTimeTokenStore', client)
    this.#prefix = prefix
  }

  async put (slot: string, hash: string, token: OneTimeToken, ttlMs: number): Promise<void> {
    if (token.accountId !== '') await this.#client.run(SHAS.index, [this.#indexKey(token.accountId)], [slot, Math.max(1, Math.ceil(ttlMs))])
    await this.#client.run(SHAS.put, [this.#key(slot)], [hash, token.purpose, token.accountId, token.email, token.credentialVersion, Math.max(1, Math.ceil(ttlMs)),
      token.passwordHash ?? '', token.fields === undefined ? '' : JSON.stringify(token.fields)])
  }

  async find (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    const fields = await this.#client.hmget(this.#key(slot), 'h', 'p', 'a', 'e', 'v', 'w', 'f') as Fields
    return fields[0] === hash && fields[1] === purpose ? tokenOf(fields) : null
  }

  async consume (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    const fields = await this.#client.run<Fields | null>(SHAS.consume, [this.#key(slot)], [hash, purpose])
    return fields === null ? null : tokenOf(fields)
  }

  async remove (slot: string): Promise<void> {
    await this.#client.del(this.#key(slot))
  }

  /** Two steps (the index and the tokens live in different Cluster slots); a slot is taken out of the index only once its token is gone. */
  async removeAll (accountId: string): Promise<void> {
    if (accountId === '') return
    const index = this.#indexKey(accountId)
    for (let slots = await this.#client.smembers(index); slots.length > 0; slots = await this.#client.smembers(index)) {
      for (const slot of slots) await this.#client.run(SHAS.removeOwn, [this.#key(slot)], [accountId])
      await this.#client.srem(index, ...slots)
    }
  }

  /**
   * The token's group (its account's tokens of its purpose) is read from the account's index and ordered by the
   * expiry each token's node wrote (x); the gate is one script on the index (the group's slots leave it only if the
   * caller's is still there), then the tokens themselves go. On a Cluster the order of tokens on different nodes is
   * their clocks' (the tokens it orders are whole requests apart).
   */
  async consumeFirst (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null> {
    const [storedHash, storedPurpose, accountId, expires] = await this.#client.hmget(this.#key(slot), 'h', 'p', 'a', 'x')
    if (storedHash !== hash || storedPurpose !== purpose || accountId === null || accountId === '') return null
    const members = (await this.#client.smembers(this.#indexKey(accountId))).filter((member) => member !== slot)
    const records = await Promise.all(members.map(async (member) => await this.#client.hmget(this.#key(member), 'p', 'a', 'x')))
    const group = members.filter((_, i) => records[i]![0] === purpose && records[i]![1] === accountId)
    // A key that is there has not expired: its x is in the future.
    if (records.some(([memberPurpose, memberAccount, memberExpires]) => memberPurpose === purpose && memberAccount === accountId &&
      memberExpires !== null && expires !== null && Number(memberExpires) < Number(expires))) return null
    if (await this.#client.run(SHAS.claim, [this.#indexKey(accountId)], [slot, ...group]) !== 1) return null
    for (const member of group) await this.#client.run(SHAS.removeOwn, [this.#key(member)], [accountId])
    const consumed = await this.#client.run<Fields | null>(SHAS.consume, [this.#key(slot)], [hash, purpose])
    return consumed === null ? null : tokenOf(consumed)
  }

  async list (accountId: string, purpose: string): Promise<OneTimeToken[]> {
    if (accountId === '') return []
    const found: OneTimeToken[] = []
    for (const member of await this.#client.smembers(this.#indexKey(accountId))) {
      const fields = await this.#client.hmget(this.#key(member), 'h', 'p', 'a', 'e', 'v', 'w', 'f') as Fields
      if (fields[1] === purpose && fields[2] === accountId) found.push(tokenOf(fields))
    }
    return found
  }

  #indexKey (accountId: string): string {
    return `${this.#prefix}account:{${accountId}}`
  }

  #key (slot: string): string {
    return `${this.#prefix}{${slot}}`
  }
}
