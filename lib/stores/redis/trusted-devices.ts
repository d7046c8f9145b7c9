import { redisCommands, type RedisClient, type RedisCommands } from './client.js'
import { LUA_NOW, scripts } from './lua.js'
import type { NewTrustedDevice, TrustedDeviceInfo, TrustedDeviceStore } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface RedisTrustedDeviceStoreOptions {
  /** Your ioredis or node-redis client (or cluster); the store never connects or disconnects it. */
  client: RedisClient
  /** Key prefix (default 'fastify-password-auth:trusted-devices:'); no braces, they pick Cluster slots. */
  prefix?: string
}

// One hash per account: g the generation, and t:<device hash> = "<id>\t<generation>\t<created>\t<last used>\t<until>\t<label>"
// per trust (ms, the Redis server's clock). Every call is one Lua script on that one key: atomic, and Cluster-safe.
// The key lives a day past its longest trust, so the generation outlives every trust made with an older one.
const PARSE = `${LUA_NOW}
local DAY = 86400000
local g = tonumber(redis.call('HGET', KEYS[1], 'g') or '0')
local function parse (value)
  local id, gen, created, used, untilMs, label = string.match(value, '^([^\\t]*)\\t(%d+)\\t(%d+)\\t(%d+)\\t(%d+)\\t(.*)$')
  return {id = id, gen = tonumber(gen), created = created, used = used, untilMs = tonumber(untilMs), label = label}
end
local function live (trust) return trust.gen == g and trust.untilMs > now end
local function keep (ms)
  if redis.call('PTTL', KEYS[1]) < ms then redis.call('PEXPIRE', KEYS[1], ms) end
end
local function each (visit)
  local fields = redis.call('HGETALL', KEYS[1])
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 't:' then
      local trust = parse(fields[i + 1])
      if live(trust) then
        if visit(fields[i], trust) then return end
      else
        redis.call('HDEL', KEYS[1], fields[i])
      end
    end
  end
end
`

const SCRIPTS = {
  trust: `${PARSE}
if g ~= tonumber(ARGV[4]) then return 0 end
each(function () return false end)
local untilMs = now + tonumber(ARGV[5])
redis.call('HSET', KEYS[1], 'g', g, 't:' .. ARGV[1], table.concat({ARGV[2], g, now, now, untilMs, ARGV[3]}, '\\t'))
keep(tonumber(ARGV[5]) + DAY)
return 1`,
  use: `${PARSE}
for i = 1, #ARGV do
  local field = 't:' .. ARGV[i]
  local value = redis.call('HGET', KEYS[1], field)
  if value then
    local trust = parse(value)
    if live(trust) then
      redis.call('HSET', KEYS[1], field, table.concat({trust.id, trust.gen, trust.created, now, trust.untilMs, trust.label}, '\\t'))
      return {trust.id, trust.gen}
    end
  end
end
return false`,
  list: `${PARSE}
local found = {}
each(function (_, trust)
  found[#found + 1] = {trust.id, trust.label, trust.created, tostring(trust.untilMs), trust.used}
  return false
end)
return found`,
  remove: `${PARSE}
local removed = 0
each(function (field, trust)
  if trust.id == ARGV[1] then
    redis.call('HDEL', KEYS[1], field)
    removed = 1
    return true
  end
  return false
end)
return removed`,
  endAll: `${PARSE}
local fields = redis.call('HKEYS', KEYS[1])
for i = 1, #fields do
  if string.sub(fields[i], 1, 2) == 't:' then redis.call('HDEL', KEYS[1], fields[i]) end
end
local next = redis.call('HINCRBY', KEYS[1], 'g', 1)
keep(DAY)
return next`
} as const

const SHAS = scripts(SCRIPTS)

const OPTIONS: StoreOptionRules = { client: 'client', prefix: 'prefix' }

/** Devices trusted for the second factor, in Redis, shared by every instance. */
export class RedisTrustedDeviceStore implements TrustedDeviceStore {
  readonly #client: RedisCommands
  readonly #prefix: string

  constructor (options: RedisTrustedDeviceStoreOptions) {
    checkStoreOptions('RedisTrustedDeviceStore', options, OPTIONS)
    const { client, prefix = 'fastify-password-auth:trusted-devices:' } = options
    this.#client = redisCommands('RedisTrustedDeviceStore', client)
    this.#prefix = prefix
  }

  async generation (accountId: string): Promise<number> {
    return Number(await this.#client.hget(this.#key(accountId), 'g') ?? 0)
  }

  async trust (accountId: string, { id, deviceHash, label }: NewTrustedDevice, ttlMs: number, generation: number): Promise<boolean> {
    return await this.#run('trust', accountId, deviceHash, id, label, generation, ttlMs) === 1
  }

  async use (accountId: string, deviceHashes: string[]): Promise<{ id: string, generation: number } | null> {
    if (deviceHashes.length === 0) return null
    const found = await this.#run('use', accountId, ...deviceHashes) as [string, number] | null
    return found === null ? null : { id: String(found[0]), generation: Number(found[1]) }
  }

  async list (accountId: string): Promise<TrustedDeviceInfo[]> {
    const found = await this.#run('list', accountId) as Array<[string, string, string, string, string]>
    return found
      .map(([id, label, createdAt, trustedUntil, lastUsedAt]) => ({ id, label, createdAt: Number(createdAt), trustedUntil: Number(trustedUntil), lastUsedAt: Number(lastUsedAt) }))
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
  }

  async remove (accountId: string, id: string): Promise<boolean> {
    return await this.#run('remove', accountId, id) === 1
  }

  async endAll (accountId: string): Promise<number> {
    return Number(await this.#run('endAll', accountId))
  }

  async forget (accountId: string): Promise<void> {
    await this.#client.del(this.#key(accountId))
  }

  async #run (script: keyof typeof SCRIPTS, accountId: string, ...args: Array<string | number>): Promise<unknown> {
    return await this.#client.run(SHAS[script], [this.#key(accountId)], args)
  }

  #key (accountId: string): string {
    return `${this.#prefix}{${accountId}}`
  }
}
