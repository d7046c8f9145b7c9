/**
 * The `scale` section: Login at the machine's full parallelism, 4 × cores connections, against the raw
 * argon2 ceiling and against the hand-written login, in interleaved rounds (ceiling, Login, by hand with a
 * libuv thread per core, by hand with libuv's default pool; again …), so that every ratio is a median of
 * pairs. Runs on any machine: the numbers of threads and connections follow its core count.
 *
 * - Login: the plugin as installed, no options and no UV_THREADPOOL_SIZE: a hashing thread per core.
 * - By hand, a thread per core: the same server code's `/hand/login` (lookup, argon2 `verify`,
 *   `jwt.sign`) in a server started with UV_THREADPOOL_SIZE = cores, the most a hand-written login gets
 *   from the machine. The fair baseline, with a target.
 * - By hand, libuv's default pool: `/hand/login` in the Login server itself (no UV_THREADPOOL_SIZE, so
 *   libuv's 4 threads), what a hand-written server typically runs with. For information: on more than 4
 *   cores it leaves cores idle, on fewer it runs more hashes than cores.
 * - Ceiling: raw `verify` in a process of its own, 4 × cores in flight on a libuv pool of `cores`
 *   threads: every core hashing all the time, no HTTP, no event-loop work.
 */
import { availableParallelism } from 'node:os'
import type { CeilingResult } from './ceiling.js'
import { runChild } from './child.js'
import { load, merge, type LoadResult } from './load.js'
import { log, loginLoad, startServer, type Server } from './scenarios.js'

const CEILING_SCRIPT = new URL('./ceiling.js', import.meta.url).pathname
/** libuv's pool when UV_THREADPOOL_SIZE is not set. */
const LIBUV_DEFAULT_THREADS = 4

/** One run, and the hashes running during it on average (the server samples them every 10 ms). */
export type ScaleRun = LoadResult & { hashesRunning?: number }

export interface ScaleResult {
  cores: number
  connections: number
  /** Threads hashing on each side: the plugin's, libuv's with UV_THREADPOOL_SIZE = cores, libuv's default. */
  threads: { login: number, handFull: number, handDefault: number }
  ceiling: CeilingResult[]
  login: ScaleRun[]
  /** /hand/login with UV_THREADPOOL_SIZE = cores. */
  handFull: ScaleRun[]
  /** /hand/login with libuv's default pool. */
  handDefault: ScaleRun[]
}

interface HashSamples { samples: number, plugin: number, hand: number }

async function hashSamples (server: Server): Promise<HashSamples> {
  return (await (await fetch(`${server.url}/bench/stats`)).json() as { hashSamples: HashSamples }).hashSamples
}

/** A login run at `connections`, with the mean number of hashes `side` had running. */
async function measured (server: Server, path: '/Auth/Login' | '/hand/login', connections: number, seconds: number): Promise<ScaleRun> {
  const before = await hashSamples(server)
  const run = await load(loginLoad(server, connections, seconds, path))
  const after = await hashSamples(server)
  const side = path === '/Auth/Login' ? 'plugin' : 'hand'
  const samples = after.samples - before.samples
  return Object.assign(run, samples > 0 ? { hashesRunning: (after[side] - before[side]) / samples } : {})
}

/** Every run of `runs` pooled, with its rounds and their mean hashes running. */
export function pooled (runs: ScaleRun[]): ScaleRun & { rounds: ScaleRun[] } {
  const known = runs.filter((run) => run.hashesRunning !== undefined)
  const hashesRunning = known.length === 0 ? undefined : known.reduce((sum, run) => sum + run.hashesRunning! * run.durationSeconds, 0) / known.reduce((sum, run) => sum + run.durationSeconds, 0)
  return Object.assign(merge(runs), { rounds: runs }, hashesRunning === undefined ? {} : { hashesRunning })
}

export async function scale (seconds: number, rounds: number): Promise<ScaleResult> {
  const cores = availableParallelism()
  const connections = 4 * cores
  // The plugin as installed: no UV_THREADPOOL_SIZE (undefined removes one the bench was started with).
  const loginServer = await startServer({ name: 'scale', env: { UV_THREADPOOL_SIZE: undefined, BENCH_SAMPLE_HASHES: '1' } })
  const handServer = await startServer({ name: 'scale-hand', env: { UV_THREADPOOL_SIZE: String(cores), BENCH_SAMPLE_HASHES: '1' } })
  try {
    log(`scale: ${connections} connections on ${cores} cores; warm-up`)
    for (const [server, path] of [[loginServer, '/Auth/Login'], [handServer, '/hand/login'], [loginServer, '/hand/login']] as const) {
      await load(loginLoad(server, connections, 1.5, path))
    }
    const result: ScaleResult = {
      cores,
      connections,
      threads: { login: cores, handFull: cores, handDefault: LIBUV_DEFAULT_THREADS },
      ceiling: [],
      login: [],
      handFull: [],
      handDefault: []
    }
    for (let round = 1; round <= rounds; round++) {
      const ceiling = JSON.parse(await runChild(CEILING_SCRIPT, [String(connections), String(seconds * 1000), '500'], { UV_THREADPOOL_SIZE: String(cores) })) as CeilingResult
      result.ceiling.push(ceiling)
      result.login.push(await measured(loginServer, '/Auth/Login', connections, seconds))
      result.handFull.push(await measured(handServer, '/hand/login', connections, seconds))
      result.handDefault.push(await measured(loginServer, '/hand/login', connections, seconds))
      const rate = (runs: ScaleRun[]): string => `${runs.at(-1)!.okPerSecond.toFixed(1)}/s (${runs.at(-1)!.hashesRunning?.toFixed(1) ?? '?'} hashing)`
      log(`scale round ${round}: ceiling ${ceiling.perSecond.toFixed(1)}/s, login ${rate(result.login)}, ` +
        `by hand with ${cores} libuv threads ${rate(result.handFull)}, by hand with libuv's ${LIBUV_DEFAULT_THREADS} ${rate(result.handDefault)}`)
    }
    return result
  } finally {
    await Promise.all([loginServer.stop(), handServer.stop()])
  }
}
