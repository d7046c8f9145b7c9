import { redisCommands, type RedisClient, type RedisCommands } from './client.js'
import { LUA_NOW, scripts } from './lua.js'
import type {
  NewSession, RotationResult, SessionEndReason, SessionInfo, SessionPolicy, SessionState, SessionStore, SessionTimes
} from '../types.js'
import { checkStoreOptions, type StoreOptionRules } from '../store-options.js'

export interface RedisSessionStoreOptions {
  /** Your ioredis or node-redis client (or cluster); the store never connects or disconnects it. */
  client: RedisClient
  /** Key prefix (default 'fastify-password-auth:sessions:'); no braces, they pick Cluster slots. */
  prefix?: string
}

// A session is a hash {sid} that expires (on the Redis server's clock) at its idle or absolute limit,
// whichever comes first, so a live key is a live session and the per-request check is one HMGET.
// Ending deletes it and leaves {sid}:ended (the reason) for as long as the session would have lived, so
// a late refresh learns why it fails. Both keys share the hash tag: one Cluster slot, one atomic script.
// Fields: a account id, v credential version, k key id, g generation, r rotated at, c created at,
// u last used, at last password proof, m '1' once a second factor was proved, td '1' when a trusted device stood for it,
// i idle limit, e absolute end (ms, server time), ip, ua. Sessions
// created before `at` existed read their creation time instead.

const CREATE = `${LUA_NOW}
local idleMs, maxMs = tonumber(ARGV[6]), tonumber(ARGV[7])
local idle, ends = now + idleMs, now + maxMs
redis.call('HSET', KEYS[1], 'a', ARGV[1], 'v', ARGV[2], 'k', ARGV[3], 'ip', ARGV[4], 'ua', ARGV[5],
  'g', 0, 'r', now, 'c', now, 'u', now, 'at', now, 'i', idle, 'e', ends, 'm', ARGV[8], 'td', ARGV[9])
if ARGV[10] and ARGV[10] ~= '' then redis.call('HSET', KEYS[1], 'am', ARGV[10]) end
redis.call('PEXPIRE', KEYS[1], math.min(idle, ends) - now)
return {now, math.min(idle, ends) - now, ends - now}`

const END = `local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return false end
local account = redis.call('HGET', KEYS[1], 'a')
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
return account`

const REAUTHENTICATE = `${LUA_NOW}
if redis.call('PTTL', KEYS[1]) <= 0 then return false end
redis.call('HSET', KEYS[1], 'at', now)
if ARGV[1] == '1' then redis.call('HSET', KEYS[1], 'm', '1') end
if ARGV[2] and ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'am', ARGV[2]) end
return now`

const ROTATE = `${LUA_NOW}
local generation, keyId, idleMs, graceMs = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local s = redis.call('HMGET', KEYS[1], 'a', 'v', 'k', 'g', 'r', 'c', 'i', 'e', 'at', 'm', 'td', 'am')
if not s[1] then
  if redis.call('EXISTS', KEYS[2]) == 1 then return {'ended'} end
  return {'unknown'}
end
local current, rotatedAt, idle, ends = tonumber(s[4]), tonumber(s[5]), tonumber(s[7]), tonumber(s[8])
if now >= ends then return {'expired'} end
if now >= idle then return {'idle'} end
if generation == current then
  current = current + 1
  idle = now + idleMs
  redis.call('HSET', KEYS[1], 'g', current, 'k', keyId, 'r', now, 'u', now, 'i', idle)
  redis.call('PEXPIRE', KEYS[1], math.min(idle, ends) - now)
  return {'rotated', current, keyId, s[1], s[2], s[6], math.min(idle, ends) - now, ends - now, s[9] or s[6], s[10] or '0', s[11] or '0', s[12] or ''}
end
if generation == current - 1 and now - rotatedAt <= graceMs then
  return {'grace', current, s[3], s[1], s[2], s[6], math.min(idle, ends) - now, ends - now, s[9] or s[6], s[10] or '0', s[11] or '0', s[12] or ''}
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], 'refresh_token_reused', 'PX', math.min(idle, ends) - now)
return {'reused', s[1]}`

// The account's index entry (score: the app's clock) and its lifetime, in one step.
const INDEX = `redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])`

const SHAS = scripts({ create: CREATE, end: END, reauthenticate: REAUTHENTICATE, rotate: ROTATE, index: INDEX })

type Reply = Array<string | number>

const INFO_FIELDS = ['a', 'c', 'u', 'i', 'e', 'ip', 'ua', 'at', 'td'] as const
/**
 * An index entry whose session key is missing is removed only once it is this old: a Login writes the
 * entry first and the session a moment later, and must not be dropped in between (it would escape a
 * later "log out everywhere"). Generous, since the score is an app clock and app clocks may differ.
 */
const INDEX_SETTLE_MS = 300_000

function times (createdAt: unknown, expiresInMs: unknown, remainingMs: unknown): SessionTimes {
  return { createdAt: Number(createdAt), expiresInMs: Number(expiresInMs), remainingMs: Number(remainingMs) }
}

const OPTIONS: StoreOptionRules = { client: 'client', prefix: 'prefix' }

/**
 * Sessions in Redis, shared by every instance: atomic Lua scripts (defined once per client) on keys of
 * one hash slot, with the Redis server's clock, so Redis Cluster works and app clocks may differ. An
 * account's session ids are kept in a set of their own, for listing and ending them all.
 */
export class RedisSessionStore implements SessionStore {
  readonly #client: RedisCommands
  readonly #prefix: string

  constructor (options: RedisSessionStoreOptions) {
    checkStoreOptions('RedisSessionStore', options, OPTIONS)
    const { client, prefix = 'fastify-password-auth:sessions:' } = options
    this.#client = redisCommands('RedisSessionStore', client)
    this.#prefix = prefix
  }

  async create (session: NewSession, policy: SessionPolicy): Promise<SessionTimes> {
    // The index first: a session it does not list could not be ended with the others.
    const index = this.#accountKey(session.accountId)
    await this.#client.run(SHAS.index, [index], [Date.now(), session.id, policy.maxMs])
    const [createdAt, expiresInMs, remainingMs] = await this.#client.run<number[]>(SHAS.create, [this.#sessionKey(session.id)], [
      session.accountId, session.credentialVersion, session.keyId, session.ip, session.userAgent, policy.idleMs, policy.maxMs, session.mfa === true ? '1' : '0',
      session.trustedDevice === true ? '1' : '0', session.amr?.join(' ') ?? ''])
    return times(createdAt, expiresInMs, remainingMs)
  }

  async get (sessionId: string): Promise<SessionState | null> {
    const [accountId, credentialVersion, authenticatedAt, createdAt, mfa] = await this.#client.hmget(this.#sessionKey(sessionId), 'a', 'v', 'at', 'c', 'm')
    if (accountId === null || credentialVersion === null) return null
    return { accountId, credentialVersion: Number(credentialVersion), authenticatedAt: Number(authenticatedAt ?? createdAt), mfa: mfa === '1' }
  }

  async reauthenticate (sessionId: string, mfa = false, amr?: string[]): Promise<number | null> {
    const at = await this.#client.run<number | null>(SHAS.reauthenticate, [this.#sessionKey(sessionId)], [mfa ? '1' : '0', amr?.join(' ') ?? ''])
    return at === null ? null : Number(at)
  }

  async rotate (sessionId: string, generation: number, keyId: string, policy: SessionPolicy): Promise<RotationResult> {
    const key = this.#sessionKey(sessionId)
    const reply = await this.#client.run<Reply>(SHAS.rotate, [key, `${key}:ended`], [generation, keyId, policy.idleMs, policy.graceMs])
    const [outcome, current, currentKey, accountId, credentialVersion, createdAt, expiresInMs, remainingMs, authenticatedAt, mfa, trustedDevice, amr] = reply
    switch (outcome) {
      case 'rotated':
      case 'grace':
        return {
          outcome,
          generation: Number(current),
          keyId: String(currentKey),
          accountId: String(accountId),
          credentialVersion: Number(credentialVersion),
          authenticatedAt: Number(authenticatedAt),
          mfa: mfa === '1',
          trustedDevice: trustedDevice === '1',
          ...times(createdAt, expiresInMs, remainingMs),
          ...typeof amr === 'string' && amr !== '' ? { amr: amr.split(' ') } : {}
        }
      case 'reused': return { outcome, accountId: String(current) }
      default: return { outcome: outcome as 'ended' | 'idle' | 'expired' | 'unknown' }
    }
  }

  async end (sessionId: string, reason: SessionEndReason): Promise<string | null> {
    const key = this.#sessionKey(sessionId)
    return await this.#client.run<string | null>(SHAS.end, [key, `${key}:ended`], [reason])
  }

  async endAll (accountId: string, reason: SessionEndReason): Promise<string[]> {
    const entries = await this.#entries(accountId)
    const results = await Promise.all(entries.map(async ({ id }) => await this.end(id, reason)))
    await this.#forget(accountId, entries.filter(({ indexedAt }, i) => results[i] !== null || this.#settled(indexedAt)))
    return entries.flatMap(({ id }, i) => results[i] === null ? [] : [id])
  }

  async forget (accountId: string): Promise<string[]> {
    const entries = await this.#entries(accountId)
    const live = await Promise.all(entries.map(async ({ id }) => await this.end(id, 'account_deleted')))
    // A session's key and its ended marker share a hash slot; the index is a key of its own.
    await Promise.all(entries.map(async ({ id }) => await this.#client.del(this.#sessionKey(id), `${this.#sessionKey(id)}:ended`)))
    await this.#client.del(this.#accountKey(accountId))
    return entries.flatMap(({ id }, i) => live[i] === null ? [] : [id])
  }

  async list (accountId: string): Promise<SessionInfo[]> {
    const entries = await this.#entries(accountId)
    const records = await Promise.all(entries.map(async ({ id }) => await this.#client.hmget(this.#sessionKey(id), ...INFO_FIELDS)))
    const sessions: SessionInfo[] = []
    const gone: typeof entries = []
    for (const [i, [account, createdAt, lastUsedAt, idle, ends, ip, userAgent, authenticatedAt, trustedDevice]] of records.entries()) {
      if (account === null) {
        if (this.#settled(entries[i]!.indexedAt)) gone.push(entries[i]!)
        continue
      }
      sessions.push({
        id: entries[i]!.id,
        accountId,
        createdAt: Number(createdAt),
        lastUsedAt: Number(lastUsedAt),
        authenticatedAt: Number(authenticatedAt ?? createdAt),
        expiresAt: Math.min(Number(idle), Number(ends)),
        ip: ip ?? '',
        userAgent: userAgent ?? '',
        trustedDevice: trustedDevice === '1'
      })
    }
    await this.#forget(accountId, gone)
    return sessions.sort((a, b) => a.createdAt - b.createdAt)
  }

  /** The account's index: session ids scored by when they were added (app clock). */
  async #entries (accountId: string): Promise<Array<{ id: string, indexedAt: number }>> {
    const flat = await this.#client.zrange(this.#accountKey(accountId), '0', '-1', 'WITHSCORES')
    const entries: Array<{ id: string, indexedAt: number }> = []
    for (let i = 0; i < flat.length; i += 2) entries.push({ id: flat[i]!, indexedAt: Number(flat[i + 1]) })
    return entries
  }

  #settled (indexedAt: number): boolean {
    return Date.now() - indexedAt > INDEX_SETTLE_MS
  }

  async #forget (accountId: string, entries: Array<{ id: string }>): Promise<void> {
    if (entries.length > 0) await this.#client.zrem(this.#accountKey(accountId), ...entries.map(({ id }) => id))
  }

  #sessionKey (sessionId: string): string {
    return `${this.#prefix}{${sessionId}}`
  }

  #accountKey (accountId: string): string {
    return `${this.#prefix}account:{${accountId}}`
  }
}
