/**
 * The bench's building blocks: the server and ceiling processes, and each kind of traffic it sends.
 * run.ts puts them in order.
 */
import type autocannon from 'autocannon'
import type { CeilingResult } from './ceiling.js'
import { runChild, startChild, type Child } from './child.js'
import { load, merge, type LoadOptions, type LoadResult } from './load.js'
import { paced } from './paced.js'
import { ACTIVE_ACCOUNTS, activeEmail, activeId, BENCH_PASSWORD, type Profile } from './settings.js'
import { mintAccessToken } from './tokens.js'

const SERVER_SCRIPT = new URL('./server.js', import.meta.url).pathname
const CEILING_SCRIPT = new URL('./ceiling.js', import.meta.url).pathname

/** Connections for the cheap routes' throughput runs. */
export const ROUTE_CONNECTIONS = 32
/** Connections of a login flood: enough to keep every hashing slot busy, far below the queue's bound. */
export const LOGIN_CONNECTIONS = 16
/** GET /me's steady rate in the mixed scenario. */
export const MIXED_RATE = 400

export function log (message: string): void {
  process.stderr.write(`[bench] ${message}\n`)
}

export interface Server extends Child {
  url: string
  pid: number
}

/** The server under test, as a child process with `profile`'s environment (and `env`). */
export async function startServer (profile: Profile, env: Record<string, string> = {}): Promise<Server> {
  const child = await startChild(SERVER_SCRIPT, { NODE_ENV: 'production', ...profile.env, ...env }, /bench server listening on (http:\/\/\S+)/)
  return { ...child, url: child.match[1]!, pid: child.process.pid! }
}

/** Raw argon2 verifications in a process of their own, with `profile`'s pool and as many at once as its server. */
export async function ceiling (profile: Profile, seconds: number): Promise<CeilingResult> {
  const output = await runChild(CEILING_SCRIPT, [String(profile.hashConcurrency), String(seconds * 1000), '500'], profile.env)
  return JSON.parse(output) as CeilingResult
}

/**
 * Successful logins round-robin over the seeded accounts. Connection k of n logs in as accounts k, k + n,
 * k + 2n …, so no two connections share an e-mail and the per-e-mail limit of attempts in flight never
 * answers; the request bodies are built once.
 */
export function loginLoad (server: Server, connections: number, durationSeconds: number, path = '/Auth/Login'): LoadOptions {
  return {
    url: server.url,
    path,
    method: 'POST',
    connections,
    durationSeconds,
    headers: { 'content-type': 'application/json' },
    connectionRequests: (connection) => {
      const requests: autocannon.Request[] = []
      for (let i = connection % ACTIVE_ACCOUNTS; i < ACTIVE_ACCOUNTS; i += Math.min(connections, ACTIVE_ACCOUNTS)) {
        requests.push({ body: JSON.stringify({ email: activeEmail(i), password: BENCH_PASSWORD }) })
      }
      return requests
    },
    serverPid: server.pid,
    keepSamples: true
  }
}

/** Real tokens from real logins (accounts 100 …), for the GET routes. */
export async function loginTokens (server: Server, count: number): Promise<string[]> {
  const tokens: string[] = []
  for (let i = 0; i < count; i += 4) {
    const batch = await Promise.all([0, 1, 2, 3].map(async (j) => {
      const response = await fetch(`${server.url}/Auth/Login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: activeEmail(100 + i + j), password: BENCH_PASSWORD })
      })
      if (response.status !== 200) throw new Error(`login for the token set failed: ${response.status} ${await response.text()}`)
      return (await response.json() as { accessToken: string }).accessToken
    }))
    tokens.push(...batch)
  }
  return tokens
}

export async function expectOk (server: Server, path: string, token: string): Promise<void> {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } })
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`)
}

/** A GET route at full speed, each connection with its own token. */
export function routeLoad (server: Server, path: string, tokens: string[], durationSeconds: number): LoadOptions {
  return {
    url: server.url,
    path,
    connections: ROUTE_CONNECTIONS,
    durationSeconds,
    connectionHeaders: (connection) => ({ authorization: `Bearer ${tokens[connection % tokens.length]!}` }),
    serverPid: server.pid
  }
}

/** Runs each route `rounds` times, interleaved (so drift hits all alike); keeps every round. */
export async function interleavedRounds (server: Server, paths: string[], tokens: string[], rounds: number, seconds: number): Promise<Record<string, LoadResult[]>> {
  for (const path of paths) await load(routeLoad(server, path, tokens, 1)) // warm-up
  const results: Record<string, LoadResult[]> = Object.fromEntries(paths.map(path => [path, []]))
  for (let round = 1; round <= rounds; round++) {
    for (const path of paths) {
      const result = await load(routeLoad(server, path, tokens, seconds))
      log(`GET ${path} round ${round}: ${result.perSecond.toFixed(0)} req/s, statuses ${JSON.stringify(result.statuses)}`)
      results[path]!.push(result)
    }
  }
  return results
}

/** The round with the median throughput. */
export function median (results: LoadResult[]): LoadResult {
  return [...results].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(results.length / 2)]!
}

export interface MixedResult {
  /** All rounds pooled. */
  unloaded: LoadResult
  loaded: LoadResult
  flood: LoadResult
  /**
   * The median over the rounds of each round's p99: on a shared VM one stall of the whole machine can
   * decide a pooled p99, and it hits one round, not all.
   */
  unloadedP99: number
  loadedP99: number
  rounds: { unloadedP99: number[], loadedP99: number[] }
}

function medianOf (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** GET /me at a steady rate, alternately alone and during a login flood. */
export async function mixed (server: Server, tokens: string[], rounds: number, seconds: number): Promise<MixedResult> {
  const meAtRate = async (): Promise<LoadResult> => await paced({
    url: server.url,
    path: '/me',
    ratePerSecond: MIXED_RATE,
    durationSeconds: seconds,
    headers: (n) => ({ authorization: `Bearer ${tokens[n % tokens.length]!}` })
  })
  const unloaded: LoadResult[] = []
  const loaded: LoadResult[] = []
  const floods: LoadResult[] = []
  for (let round = 1; round <= rounds; round++) {
    unloaded.push(await meAtRate())
    const flood = load(loginLoad(server, LOGIN_CONNECTIONS, seconds + 1.5))
    await new Promise(resolve => setTimeout(resolve, 1000))
    loaded.push(await meAtRate())
    floods.push(await flood)
    log(`mixed round ${round}: /me p99 ${unloaded.at(-1)!.latency.p99.toFixed(2)} ms alone, ${loaded.at(-1)!.latency.p99.toFixed(2)} ms during ${floods.at(-1)!.okPerSecond.toFixed(0)} logins/s`)
  }
  const unloadedP99 = unloaded.map(run => run.latency.p99)
  const loadedP99 = loaded.map(run => run.latency.p99)
  return {
    unloaded: merge(unloaded),
    loaded: merge(loaded),
    flood: merge(floods),
    unloadedP99: medianOf(unloadedP99),
    loadedP99: medianOf(loadedP99),
    rounds: { unloadedP99, loadedP99 }
  }
}

/** Logout at full speed: every request spends a token, signed beforehand so signing stays off the measured path. */
export async function logout (server: Server, expectedPerSecond: number, seconds: number): Promise<LoadResult> {
  const tokens = Array.from({ length: Math.ceil(expectedPerSecond * seconds * 1.5) }, (_, i) => mintAccessToken(activeId(i)))
  let next = 0
  const result = await load({
    url: server.url,
    path: '/Auth/Logout',
    method: 'POST',
    connections: ROUTE_CONNECTIONS,
    durationSeconds: seconds,
    requestHeaders: () => {
      const token = tokens[next] ?? mintAccessToken(activeId(next))
      next++
      return { authorization: `Bearer ${token}` }
    },
    serverPid: server.pid
  })
  log(`logout: ${result.perSecond.toFixed(0)} req/s, statuses ${JSON.stringify(result.statuses)}`)
  return result
}
