import { redisCommands, type RedisClient, type RedisCommands } from './client.js'
import { LUA_NOW, scripts } from './lua.js'
import { inFlightRetryMs } from '../attempt-rules.js'
import type { AttemptOutcome, AttemptStore, Reservation, ThrottlePolicy } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface RedisAttemptStoreOptions {
  /** Your ioredis or node-redis client (or cluster); the store never connects or disconnects it. */
  client: RedisClient
  /** Key prefix (default 'fastify-password-auth:attempts:'). */
  prefix?: string
}

// Both scripts work on keys of one hash slot: {key}:state, a hash of failures, blockedUntil and
// forgetAt, and {key}:leases, a sorted set of open reservations scored by their lease end. Time is the
// Redis server's, so instances with skewed clocks agree. They mirror lib/stores/attempt-rules.ts (admit and
// afterOutcome) line for line: change both together.
const COUNTS = `local state = redis.call('HMGET', KEYS[1], 'failures', 'blockedUntil', 'forgetAt')
local failures, blockedUntil, forgetAt = tonumber(state[1]) or 0, tonumber(state[2]) or 0, tonumber(state[3]) or 0
if failures > 0 and now >= forgetAt then failures = 0 end`

// A key of an account's group (<group>/<rest>) is listed in the group's index, KEYS[3] (ARGV[#ARGV] names it;
// empty for other keys), which lives as long as the longest of its keys: clearGroup() reads it.
const INDEX = `local function index (ms)
  local member = ARGV[#ARGV]
  if member == '' then return end
  redis.call('SADD', KEYS[3], member)
  if redis.call('PTTL', KEYS[3]) < ms then redis.call('PEXPIRE', KEYS[3], math.max(1, math.ceil(ms))) end
end`

const RESERVE = `${LUA_NOW}
${INDEX}
local free, leaseMs, inFlightRetryMs, ticket = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
${COUNTS}
if not redis.call('ZSCORE', KEYS[2], ticket) then
  if blockedUntil > now then return {0, blockedUntil - now} end
  if redis.call('ZCARD', KEYS[2]) >= math.max(1, free - failures) then return {0, inFlightRetryMs} end
end
redis.call('ZADD', KEYS[2], now + leaseMs, ticket)
redis.call('PEXPIRE', KEYS[2], leaseMs)
index(leaseMs)
return {1, 0}`

const SETTLE = `${LUA_NOW}
${INDEX}
local outcome, ticket = ARGV[1], ARGV[2]
local free, blockMs, maxBlockMs, forgetAfterMs = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('ZREM', KEYS[2], ticket)
if outcome == 'success' then redis.call('DEL', KEYS[1]) end
if outcome ~= 'failure' then return 0 end
${COUNTS}
failures = failures + 1
local block = 0
if failures >= free then
  local doublings = failures - free
  block = maxBlockMs
  if doublings < 31 then block = math.min(blockMs * 2 ^ doublings, maxBlockMs) end
  blockedUntil = now + block
end
forgetAt = math.max(blockedUntil, now) + forgetAfterMs
redis.call('HSET', KEYS[1], 'failures', failures, 'blockedUntil', blockedUntil, 'forgetAt', forgetAt)
redis.call('PEXPIREAT', KEYS[1], forgetAt)
index(forgetAt - now)
return block`

const SHAS = scripts({ reserve: RESERVE, settle: SETTLE })

interface Keys { state: string, leases: string, index: string, member: string }

const OPTIONS: StoreOptionRules = { client: 'client', prefix: 'prefix' }

/**
 * Attempt counters (per e-mail and per known device) in Redis, shared by every instance. Each operation is one atomic Lua
 * script (sent by SHA), on keys that share a hash slot: Redis Cluster works.
 */
export class RedisAttemptStore implements AttemptStore {
  readonly #client: RedisCommands
  readonly #prefix: string

  constructor (options: RedisAttemptStoreOptions) {
    checkStoreOptions('RedisAttemptStore', options, OPTIONS)
    const { client, prefix = 'fastify-password-auth:attempts:' } = options
    this.#client = redisCommands('RedisAttemptStore', client)
    this.#prefix = prefix
  }

  async reserve (key: string, ticket: string, policy: ThrottlePolicy): Promise<Reservation> {
    const { state, leases, index, member } = this.#keys(key)
    const [granted, retryAfterMs] = await this.#client.run<[number, number]>(SHAS.reserve, [state, leases, index],
      [policy.freeFailures, policy.leaseMs, inFlightRetryMs(policy), ticket, member])
    return granted === 1 ? { granted: true } : { granted: false, retryAfterMs }
  }

  async settle (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy): Promise<number> {
    const { state, leases, index, member } = this.#keys(key)
    return await this.#client.run<number>(SHAS.settle, [state, leases, index],
      [outcome, ticket, policy.freeFailures, policy.blockMs, policy.maxBlockMs, policy.forgetAfterMs, member])
  }

  async clear (key: string): Promise<void> {
    const { state, leases } = this.#keys(key)
    await this.#client.del(state, leases)
  }

  /** The group's keys share its hash slot, so one DEL takes a batch of them; a key leaves the index only once it is gone. */
  async clearGroup (group: string): Promise<void> {
    const index = this.#groupIndex(group)
    for (let members = await this.#client.smembers(index); members.length > 0; members = await this.#client.smembers(index)) {
      await this.#client.del(...members.flatMap((member) => [`${member}:state`, `${member}:leases`]))
      await this.#client.srem(index, ...members)
    }
  }

  /**
   * The hash tag keeps both keys of an e-mail in one Cluster slot; an account's group (`<group>/<rest>`) is the
   * tag of all its keys and of their index.
   */
  #keys (key: string): Keys {
    const slash = key.indexOf('/')
    const base = slash === -1 ? `${this.#prefix}{${key}}` : `${this.#prefix}{${key.slice(0, slash)}}${key.slice(slash)}`
    return {
      state: `${base}:state`,
      leases: `${base}:leases`,
      index: slash === -1 ? `${base}:index` : this.#groupIndex(key.slice(0, slash)),
      member: slash === -1 ? '' : base
    }
  }

  #groupIndex (group: string): string {
    return `${this.#prefix}{${group}}:index`
  }
}
