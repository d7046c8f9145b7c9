/**
 * Store round trips per response of a measured run, counted twice: by the server under test (every
 * statement its pg Pool ran, every command its Redis client sent, by name: see stores.ts) and, for Redis,
 * by the Redis server itself (`INFO commandstats` before and after, for the same command names). The Redis
 * server counts every client's commands, so other processes sending those commands during the run show
 * up in its numbers only.
 */
import type { Redis } from 'ioredis'
import type { LoadResult } from './load.js'

export interface RoundTrips {
  /** PostgreSQL statements per response, by prepared-statement name. */
  postgres: Record<string, number>
  /** Redis commands per response, by command, as the server under test sent them. */
  redis: Record<string, number>
  /** Redis commands per response, by command, as the Redis server counted them (all its clients). */
  redisServer?: Record<string, number>
}

type Counts = Record<string, number>

interface Snapshot {
  postgres: Counts
  redis: Counts
  redisServer?: Counts
}

/** `cmdstat_hmget:calls=12,usec=…` lines of INFO commandstats, as { hmget: 12 }. */
export function parseCommandStats (info: string): Counts {
  const counts: Counts = {}
  for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts[name!] = Number(calls)
  return counts
}

function perResponse (before: Counts, after: Counts, responses: number): Counts {
  const result: Counts = {}
  for (const [name, count] of Object.entries(after)) {
    const delta = count - (before[name] ?? 0)
    if (delta > 0) result[name] = delta / responses
  }
  return result
}

function only (counts: Counts, names: string[]): Counts {
  return Object.fromEntries(Object.entries(counts).filter(([name]) => names.includes(name)))
}

/** The sum over names: statements (or commands) per response. */
export function total (counts: Counts | undefined): number {
  return Object.values(counts ?? {}).reduce((sum, n) => sum + n, 0)
}

export class RoundTripCounter {
  readonly #serverUrl: string
  readonly #redis: Redis | undefined

  /** `redis`: a client of the Redis server the server under test uses, for INFO commandstats. */
  constructor (serverUrl: string, redis?: Redis) {
    this.#serverUrl = serverUrl
    this.#redis = redis
  }

  async #snapshot (): Promise<Snapshot> {
    const stats = await (await fetch(`${this.#serverUrl}/bench/stats`)).json() as { roundTrips: { postgres: Counts, redis: Counts } }
    const redisServer = this.#redis === undefined ? undefined : parseCommandStats(await this.#redis.info('commandstats'))
    return { ...stats.roundTrips, redisServer }
  }

  /** Runs `run` and sets its result's `roundTrips`. */
  async count (run: () => Promise<LoadResult>): Promise<LoadResult> {
    const before = await this.#snapshot()
    const result = await run()
    const after = await this.#snapshot()
    const n = Math.max(1, result.responses)
    result.roundTrips = {
      postgres: perResponse(before.postgres, after.postgres, n),
      redis: perResponse(before.redis, after.redis, n),
      // Only the commands the server under test sent: commandstats also counts those run inside Lua
      // scripts (an EVALSHA's HGET, DEL …) and other clients' commands.
      redisServer: before.redisServer === undefined || after.redisServer === undefined
        ? undefined
        : only(perResponse(before.redisServer, after.redisServer, n), Object.keys(after.redis))
    }
    return result
  }
}
