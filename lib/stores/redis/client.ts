import { createHash } from 'node:crypto'
import type { Cluster, Redis } from 'ioredis'

/**
 * A node-redis v5 client (`createClient()`) or cluster (`createCluster()`), as far as the stores use it:
 * commands go through `sendCommand`, so the client's own command set and type mapping do not matter.
 */
export interface NodeRedisClient {
  sendCommand: (...args: any[]) => Promise<unknown>
}

/** What the Redis stores take: an ioredis `Redis` or `Cluster`, or a node-redis client or cluster. */
export type RedisClient = Redis | Cluster | NodeRedisClient

/** A Lua script and its SHA1, which EVALSHA names it by. */
export interface Script {
  lua: string
  sha: string
}

export function script (lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') }
}

type Arg = string | number

/**
 * The commands the stores send, the same on either client. Replies are RESP2's: strings, integers, null
 * and arrays of them (a script's `false` is null).
 */
export interface RedisCommands {
  /** EVALSHA, and EVAL once if the server does not know the script yet (a restart, a failover, a new node). */
  run: <T = unknown>(script: Script, keys: string[], args: Arg[]) => Promise<T>
  hmget: (key: string, ...fields: string[]) => Promise<Array<string | null>>
  hget: (key: string, field: string) => Promise<string | null>
  hgetall: (key: string) => Promise<Record<string, string>>
  get: (key: string) => Promise<string | null>
  del: (...keys: string[]) => Promise<number>
  smembers: (key: string) => Promise<string[]>
  srem: (key: string, ...members: string[]) => Promise<number>
  zrange: (key: string, ...args: string[]) => Promise<string[]>
  zrem: (key: string, ...members: string[]) => Promise<number>
  /** The keys matching `match`, a page at a time, from every primary (a Cluster spreads them). */
  scan: (match: string) => AsyncGenerator<string[]>
}

const noScript = (err: unknown): boolean => err instanceof Error && err.message.startsWith('NOSCRIPT')

// node-redis clients have `isOpen` (a getter on the client and the cluster); ioredis has `defineCommand`.
function isNodeRedis (client: object): boolean {
  return 'isOpen' in client && !('defineCommand' in client)
}

/**
 * The stores' one way to talk to Redis, whichever client the host passed. Refuses a node-redis client
 * speaking RESP3, whose replies have other shapes.
 */
export function redisCommands (store: string, client: RedisClient): RedisCommands {
  if (!isNodeRedis(client)) return ioredisCommands(client as Redis | Cluster)
  const nodeRedis = client as NodeRedisClient & { masters?: unknown[], options?: { RESP?: number }, _options?: { RESP?: number } }
  if ((nodeRedis.options ?? nodeRedis._options)?.RESP === 3) {
    throw new TypeError(`${store}: the node-redis client speaks RESP3; create it with RESP 2 (the default) for the stores`)
  }
  const cluster = Array.isArray(nodeRedis.masters)
  const send = cluster
    ? async (key: string | undefined, args: Arg[]) => await nodeRedis.sendCommand(key, false, args.map(String))
    : async (_key: string | undefined, args: Arg[]) => await nodeRedis.sendCommand(args.map(String))
  const primaries = cluster
    ? async () => await Promise.all((nodeRedis as unknown as { masters: unknown[], nodeClient: (node: unknown) => Promise<NodeRedisClient> }).masters
      .map(async (master) => await (nodeRedis as unknown as { nodeClient: (node: unknown) => Promise<NodeRedisClient> }).nodeClient(master)))
    : async () => [nodeRedis]
  const commands: RedisCommands = {
    run: async <T>(script: Script, keys: string[], args: Arg[]) => {
      try {
        return await send(keys[0], ['EVALSHA', script.sha, keys.length, ...keys, ...args]) as T
      } catch (err) {
        if (!noScript(err)) throw err
        return await send(keys[0], ['EVAL', script.lua, keys.length, ...keys, ...args]) as T
      }
    },
    hmget: async (key, ...fields) => await send(key, ['HMGET', key, ...fields]) as Array<string | null>,
    hget: async (key, field) => await send(key, ['HGET', key, field]) as string | null,
    hgetall: async (key) => {
      const flat = await send(key, ['HGETALL', key]) as string[]
      const record: Record<string, string> = {}
      for (let i = 0; i < flat.length; i += 2) record[flat[i]!] = flat[i + 1]!
      return record
    },
    get: async (key) => await send(key, ['GET', key]) as string | null,
    del: async (...keys) => await send(keys[0], ['DEL', ...keys]) as number,
    smembers: async (key) => await send(key, ['SMEMBERS', key]) as string[],
    srem: async (key, ...members) => await send(key, ['SREM', key, ...members]) as number,
    zrange: async (key, ...args) => await send(key, ['ZRANGE', key, ...args]) as string[],
    zrem: async (key, ...members) => await send(key, ['ZREM', key, ...members]) as number,
    scan: async function * (match) {
      for (const node of await primaries()) {
        let cursor = '0'
        do {
          const [next, keys] = await node.sendCommand(['SCAN', cursor, 'MATCH', match, 'COUNT', '500']) as [string, string[]]
          cursor = next
          if (keys.length > 0) yield keys
        } while (cursor !== '0')
      }
    }
  }
  return commands
}

function ioredisCommands (client: Redis | Cluster): RedisCommands {
  return {
    run: async <T>(script: Script, keys: string[], args: Arg[]) => {
      try {
        return await client.evalsha(script.sha, keys.length, ...keys, ...args) as T
      } catch (err) {
        if (!noScript(err)) throw err
        return await client.eval(script.lua, keys.length, ...keys, ...args) as T
      }
    },
    hmget: async (key, ...fields) => await client.hmget(key, ...fields),
    hget: async (key, field) => await client.hget(key, field),
    hgetall: async (key) => await client.hgetall(key),
    get: async (key) => await client.get(key),
    del: async (...keys) => await client.del(...keys),
    smembers: async (key) => await client.smembers(key),
    srem: async (key, ...members) => await client.srem(key, ...members),
    zrange: async (key, ...args) => await (client as unknown as { zrange: (...args: string[]) => Promise<string[]> }).zrange(key, ...args),
    zrem: async (key, ...members) => await client.zrem(key, ...members),
    scan: async function * (match) {
      for (const node of 'isCluster' in client && client.isCluster ? (client as Cluster).nodes('master') : [client as Redis]) {
        let cursor = '0'
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 500)
          cursor = next
          if (keys.length > 0) yield keys
        } while (cursor !== '0')
      }
    }
  }
}
