import type { Cluster, Redis } from 'ioredis'
import { LUA_NOW } from './lua.js'
import { inFlightRetryMs } from '../attempt-rules.js'
import type { AttemptOutcome, AttemptStore, Reservation, ThrottlePolicy } from '../types.js'

export interface RedisAttemptStoreOptions {
  /** Your ioredis client (or Cluster); the store never connects or disconnects it. */
  client: Redis | Cluster
  /** Key prefix (default 'fastify-password-auth:attempts:'). */
  prefix?: string
}

// Both scripts work on two keys of one hash slot: {key}:state, a hash of failures, blockedUntil and
// forgetAt, and {key}:leases, a sorted set of open reservations scored by their lease end. Time is the
// Redis server's, so instances with skewed clocks agree. They mirror lib/stores/attempt-rules.ts (admit and
// afterOutcome) line for line: change both together.
const COUNTS = `local state = redis.call('HMGET', KEYS[1], 'failures', 'blockedUntil', 'forgetAt')
local failures, blockedUntil, forgetAt = tonumber(state[1]) or 0, tonumber(state[2]) or 0, tonumber(state[3]) or 0
if failures > 0 and now >= forgetAt then failures = 0 end`

const RESERVE = `${LUA_NOW}
local free, leaseMs, inFlightRetryMs, ticket = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
${COUNTS}
if not redis.call('ZSCORE', KEYS[2], ticket) then
  if blockedUntil > now then return {0, blockedUntil - now} end
  if redis.call('ZCARD', KEYS[2]) >= math.max(1, free - failures) then return {0, inFlightRetryMs} end
end
redis.call('ZADD', KEYS[2], now + leaseMs, ticket)
redis.call('PEXPIRE', KEYS[2], leaseMs)
return {1, 0}`

const SETTLE = `${LUA_NOW}
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
return block`

const RESERVE_COMMAND = 'fastifyPasswordAuthReserve'
const SETTLE_COMMAND = 'fastifyPasswordAuthSettle'

interface ScriptedClient {
  [RESERVE_COMMAND]: (state: string, leases: string, ...args: Array<string | number>) => Promise<[number, number]>
  [SETTLE_COMMAND]: (state: string, leases: string, ...args: Array<string | number>) => Promise<number>
  del: (...keys: string[]) => Promise<number>
}

/**
 * Attempt counters (per e-mail and per known device) in Redis, shared by every instance. Each operation is one atomic Lua
 * script (defined once per client, sent by SHA), on keys that share a hash slot: Redis Cluster works.
 */
export class RedisAttemptStore implements AttemptStore {
  readonly #client: ScriptedClient
  readonly #prefix: string

  constructor ({ client, prefix = 'fastify-password-auth:attempts:' }: RedisAttemptStoreOptions) {
    if (typeof (client as unknown as Partial<ScriptedClient>)[RESERVE_COMMAND] !== 'function') {
      client.defineCommand(RESERVE_COMMAND, { numberOfKeys: 2, lua: RESERVE })
      client.defineCommand(SETTLE_COMMAND, { numberOfKeys: 2, lua: SETTLE })
    }
    this.#client = client as unknown as ScriptedClient
    this.#prefix = prefix
  }

  async reserve (key: string, ticket: string, policy: ThrottlePolicy): Promise<Reservation> {
    const [granted, retryAfterMs] = await this.#client[RESERVE_COMMAND](
      ...this.#keys(key), policy.freeFailures, policy.leaseMs, inFlightRetryMs(policy), ticket)
    return granted === 1 ? { granted: true } : { granted: false, retryAfterMs }
  }

  async settle (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy): Promise<number> {
    return await this.#client[SETTLE_COMMAND](
      ...this.#keys(key), outcome, ticket, policy.freeFailures, policy.blockMs, policy.maxBlockMs, policy.forgetAfterMs)
  }

  async clear (key: string): Promise<void> {
    await this.#client.del(...this.#keys(key))
  }

  /** The hash tag keeps both keys of an e-mail in one Cluster slot. */
  #keys (key: string): [string, string] {
    const base = `${this.#prefix}{${key}}`
    return [`${base}:state`, `${base}:leases`]
  }
}
