import { redisCommands, type RedisClient, type RedisCommands } from './client.js'
import { scripts } from './lua.js'
import type { MfaStore, StoredMfa } from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface RedisMfaStoreOptions {
  /** Your ioredis or node-redis client (or cluster); the store never connects or disconnects it. */
  client: RedisClient
  /** Key prefix (default 'fastify-password-auth:mfa:'). */
  prefix?: string
}

// One hash per account (s: the sealed secret, e: '1' when on, l: the last accepted step, r: the recovery
// codes' hashes, space-separated). Every change is one Lua script on one key: atomic, and Cluster-safe.
const SCRIPTS = {
  begin: `if redis.call('HGET', KEYS[1], 'e') == '1' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 's', ARGV[1], 'e', '0', 'l', '0', 'r', '')
return 1`,
  enable: `local r = redis.call('HMGET', KEYS[1], 's', 'e')
if r[1] ~= ARGV[1] or r[2] ~= '0' then return 0 end
redis.call('HSET', KEYS[1], 'e', '1', 'l', ARGV[2], 'r', ARGV[3])
return 1`,
  acceptStep: `local r = redis.call('HMGET', KEYS[1], 'e', 'l')
if r[1] ~= '1' or tonumber(ARGV[1]) <= tonumber(r[2]) then return 0 end
redis.call('HSET', KEYS[1], 'l', ARGV[1])
return 1`,
  useRecoveryCode: `local r = redis.call('HMGET', KEYS[1], 'e', 'r')
if r[1] ~= '1' then return 0 end
local wanted = {}
for i = 1, #ARGV do wanted[ARGV[i]] = true end
local kept, found = {}, false
for code in string.gmatch(r[2], '%S+') do
  if not found and wanted[code] then found = true else kept[#kept + 1] = code end
end
if not found then return 0 end
redis.call('HSET', KEYS[1], 'r', table.concat(kept, ' '))
return 1`,
  replaceRecoveryCodes: `if redis.call('HGET', KEYS[1], 'e') ~= '1' then return 0 end
redis.call('HSET', KEYS[1], 'r', ARGV[1])
return 1`,
  reseal: `if redis.call('HGET', KEYS[1], 's') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 's', ARGV[2])
return 1`,
  disable: `local e = redis.call('HGET', KEYS[1], 'e')
redis.call('DEL', KEYS[1])
if e == '1' then return 1 end
return 0`
} as const

const SHAS = scripts(SCRIPTS)

const OPTIONS: StoreOptionRules = { client: 'client', prefix: 'prefix' }

/** Second factors in Redis, shared by every instance. */
export class RedisMfaStore implements MfaStore {
  readonly #client: RedisCommands
  readonly #prefix: string

  constructor (options: RedisMfaStoreOptions) {
    checkStoreOptions('RedisMfaStore', options, OPTIONS)
    const { client, prefix = 'fastify-password-auth:mfa:' } = options
    this.#client = redisCommands('RedisMfaStore', client)
    this.#prefix = prefix
  }

  async get (accountId: string): Promise<StoredMfa | null> {
    const [secret, enabled, lastStep, codes] = await this.#client.hmget(this.#key(accountId), 's', 'e', 'l', 'r')
    if (secret === null || secret === undefined) return null
    return { secret, enabled: enabled === '1', lastStep: Number(lastStep), recoveryCodes: codes === null || codes === '' || codes === undefined ? [] : codes.split(' ') }
  }

  async begin (accountId: string, secret: string): Promise<boolean> {
    return await this.#run('begin', accountId, secret)
  }

  async enable (accountId: string, secret: string, lastStep: number, recoveryCodes: string[]): Promise<boolean> {
    return await this.#run('enable', accountId, secret, lastStep, recoveryCodes.join(' '))
  }

  async acceptStep (accountId: string, step: number): Promise<boolean> {
    return await this.#run('acceptStep', accountId, step)
  }

  async useRecoveryCode (accountId: string, hashes: string[]): Promise<boolean> {
    return hashes.length > 0 && await this.#run('useRecoveryCode', accountId, ...hashes)
  }

  async replaceRecoveryCodes (accountId: string, recoveryCodes: string[]): Promise<boolean> {
    return await this.#run('replaceRecoveryCodes', accountId, recoveryCodes.join(' '))
  }

  async disable (accountId: string): Promise<boolean> {
    return await this.#run('disable', accountId)
  }

  async * secrets (): AsyncIterable<{ accountId: string, secret: string }> {
    // SCAN on every primary (a Cluster spreads the keys), matching the prefix taken literally.
    const match = `${this.#prefix.replace(/[*?[\]\\]/g, '\\$&')}{*}`
    for await (const keys of this.#client.scan(match)) {
      for (const key of keys) {
        const secret = await this.#client.hget(key, 's')
        if (secret !== null) yield { accountId: key.slice(this.#prefix.length + 1, -1), secret }
      }
    }
  }

  async reseal (accountId: string, secret: string, resealed: string): Promise<boolean> {
    return await this.#run('reseal', accountId, secret, resealed)
  }

  async #run (script: keyof typeof SCRIPTS, accountId: string, ...args: Array<string | number>): Promise<boolean> {
    return await this.#client.run(SHAS[script], [this.#key(accountId)], args) === 1
  }

  #key (accountId: string): string {
    return `${this.#prefix}{${accountId}}`
  }
}
