/**
 * The bench's building blocks: the server and ceiling processes, and each kind of traffic it sends.
 * run.ts puts them in order.
 */
import type autocannon from 'autocannon'
import type { CeilingResult } from './ceiling.js'
import { runChild, startChild, type Child } from './child.js'
import { load, merge, type LoadOptions, type LoadResult } from './load.js'
import { paced } from './paced.js'
import type { RoundTripCounter } from './round-trips.js'
import { ACTIVE_ACCOUNTS, activeEmail, activeId, BENCH_PASSWORD, type Profile } from './settings.js'
import { mintAccessToken } from './tokens.js'

const SERVER_SCRIPT = new URL('./server.js', import.meta.url).pathname
const CEILING_SCRIPT = new URL('./ceiling.js', import.meta.url).pathname
/** Sessions the bench creates per request before a logout run, few enough for a store's command timeout. */
const SESSION_BATCH = 2000

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
  /** Names its CPU profiles (BENCH_PROFILE_DIR). */
  name: string
  url: string
  pid: number
}

/** How a server under test is started: a name for its CPU profiles, and its environment (`undefined` removes a variable). */
export interface ServerProfile {
  name: string
  env: Record<string, string | undefined>
}

/** The server under test, as a child process with `profile`'s environment (and `env`). */
export async function startServer (profile: ServerProfile, env: Record<string, string | undefined> = {}, name: string = profile.name): Promise<Server> {
  const child = await startChild(SERVER_SCRIPT, { NODE_ENV: 'production', ...profile.env, ...env }, /bench server listening on (http:\/\/\S+)/)
  return { ...child, name, url: child.match[1]!, pid: child.process.pid! }
}

/** A profile name for a measured run: server, route, round. */
const profileName = (server: Server, path: string, round?: number): string =>
  `${server.name}${path.replaceAll('/', '-')}${round === undefined ? '' : `-${round}`}`

/** Raw argon2 verifications in a process of their own, with `profile`'s pool and as many at once as its server. */
export async function ceiling (profile: Profile, seconds: number): Promise<CeilingResult> {
  const output = await runChild(CEILING_SCRIPT, [String(profile.hashThreads), String(seconds * 1000), '500'], profile.env)
  return JSON.parse(output) as CeilingResult
}

/**
 * Successful logins round-robin over the seeded accounts. Connection k of n logs in as accounts k, k + n,
 * k + 2n …, so no two connections share an e-mail and the per-e-mail limit of attempts in flight never
 * answers; the request bodies are built once.
 */
export function loginLoad (server: Server, connections: number, durationSeconds: number, path = '/Auth/Login', body = (email: string): object => ({ email, password: BENCH_PASSWORD })): LoadOptions {
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
        requests.push({ body: JSON.stringify(body(activeEmail(i))) })
      }
      return requests
    },
    serverPid: server.pid,
    keepSamples: true
  }
}

/**
 * Register at full speed: every request hashes a password (new addresses, or pending ones again), as
 * Login verifies one. Connection k registers addresses k, k + n, … of its own.
 */
export function registerLoad (server: Server, connections: number, durationSeconds: number): LoadOptions {
  return {
    url: server.url,
    path: '/Auth/Register',
    method: 'POST',
    connections,
    durationSeconds,
    headers: { 'content-type': 'application/json' },
    connectionRequests: (connection) => Array.from({ length: 100 }, (_, i) => ({
      body: JSON.stringify({ email: `new${connection}-${i}@bench.test`, password: BENCH_PASSWORD, confirmPassword: BENCH_PASSWORD })
    })),
    serverPid: server.pid,
    keepSamples: true
  }
}

/** Reauthenticate at full speed: connection k proves the password of the session `tokens[k]` belongs to. */
export function reauthenticateLoad (server: Server, tokens: string[], durationSeconds: number): LoadOptions {
  return {
    url: server.url,
    path: '/Auth/Reauthenticate',
    method: 'POST',
    connections: tokens.length,
    durationSeconds,
    headers: { 'content-type': 'application/json' },
    connectionHeaders: (connection) => ({ authorization: `Bearer ${tokens[connection]!}` }),
    connectionRequests: () => [{ body: JSON.stringify({ password: BENCH_PASSWORD }) }],
    serverPid: server.pid,
    keepSamples: true
  }
}

/** Real tokens from real logins (accounts 100 …): access tokens for the GET routes, refresh tokens for Refresh. */
export async function loginSessions (server: Server, count: number, firstAccount = 100): Promise<Array<{ accessToken: string, refreshToken: string }>> {
  const sessions: Array<{ accessToken: string, refreshToken: string }> = []
  for (let i = 0; i < count; i += 4) {
    const batch = await Promise.all([0, 1, 2, 3].map(async (j) => {
      const response = await fetch(`${server.url}/Auth/Login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: activeEmail(firstAccount + i + j), password: BENCH_PASSWORD })
      })
      if (response.status !== 200) throw new Error(`login for the token set failed: ${response.status} ${await response.text()}`)
      return await response.json() as { accessToken: string, refreshToken: string }
    }))
    sessions.push(...batch)
  }
  return sessions
}

export async function loginTokens (server: Server, count: number): Promise<string[]> {
  return (await loginSessions(server, count)).map(({ accessToken }) => accessToken)
}

export async function expectOk (server: Server, path: string, token: string): Promise<void> {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } })
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`)
}

/** A GET route at full speed, each connection with its own token. */
export function routeLoad (server: Server, path: string, tokens: string[], durationSeconds: number, round?: number): LoadOptions {
  return {
    profile: round === undefined ? undefined : profileName(server, path, round),
    url: server.url,
    path,
    connections: ROUTE_CONNECTIONS,
    durationSeconds,
    connectionHeaders: (connection) => ({ authorization: `Bearer ${tokens[connection % tokens.length]!}` }),
    serverPid: server.pid
  }
}

/** Runs `run`, counting its store round trips if there is a counter. */
async function counted (counter: RoundTripCounter | undefined, run: () => Promise<LoadResult>): Promise<LoadResult> {
  return counter === undefined ? await run() : await counter.count(run)
}

/** Runs each route `rounds` times, interleaved (so drift hits all alike); keeps every round. */
export async function interleavedRounds (server: Server, paths: string[], tokens: string[], rounds: number, seconds: number, counter?: RoundTripCounter): Promise<Record<string, LoadResult[]>> {
  for (const path of paths) await load(routeLoad(server, path, tokens, 1)) // warm-up
  const results: Record<string, LoadResult[]> = Object.fromEntries(paths.map(path => [path, []]))
  for (let round = 1; round <= rounds; round++) {
    for (const path of paths) {
      const result = await counted(counter, async () => await load(routeLoad(server, path, tokens, seconds, round)))
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

/** Access tokens in the plugin's format, one per request of a logout run, signed beforehand so signing stays off the measured path. */
async function logoutTokens (server: Server, count: number, withSessions: boolean): Promise<string[]> {
  if (!withSessions) return Array.from({ length: count }, (_, i) => mintAccessToken(activeId(i), `hand-${i}`))
  const tokens: string[] = []
  for (let done = 0; done < count; done += SESSION_BATCH) {
    const created = await fetch(`${server.url}/bench/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ count: Math.min(SESSION_BATCH, count - done) })
    })
    if (!created.ok) throw new Error(`POST /bench/sessions: ${created.status} ${await created.text()}`)
    const sessions = await created.json() as Array<{ sub: string, sid: string }>
    for (const { sub, sid } of sessions) tokens.push(mintAccessToken(sub, sid))
  }
  return tokens
}

/**
 * Logout at full speed: every request spends a token of its own. `/Auth/Logout` gets tokens of live
 * sessions; `/hand/logout` (jwtVerify, then the jti into a Set) the same kind of token without a session.
 * A run sends as many requests as `expectedPerSecond` × `seconds` and stops, so no token is ever missing.
 */
export async function logout (server: Server, path: '/Auth/Logout' | '/hand/logout', expectedPerSecond: number, seconds: number, round?: number, counter?: RoundTripCounter): Promise<LoadResult> {
  const tokens = await logoutTokens(server, Math.ceil(expectedPerSecond * seconds), path === '/Auth/Logout')
  let next = 0
  const result = await counted(counter, async () => await load({
    url: server.url,
    path,
    method: 'POST',
    connections: ROUTE_CONNECTIONS,
    durationSeconds: seconds,
    amount: tokens.length,
    profile: round === undefined ? undefined : profileName(server, path, round),
    requestHeaders: () => ({ authorization: `Bearer ${tokens[next++ % tokens.length]!}` }),
    serverPid: server.pid
  }))
  log(`${path}: ${result.perSecond.toFixed(0)} req/s in ${result.durationSeconds.toFixed(1)} s, statuses ${JSON.stringify(result.statuses)}`)
  return result
}

/**
 * Plugin Logout and the hand-written one, interleaved over `rounds`, with `alongside` (Refresh) as a third
 * run of each round. A warm-up of each tells how many tokens a run of about `seconds` spends.
 */
export async function logoutRounds (server: Server, rounds: number, seconds: number, counter?: RoundTripCounter,
  alongside?: (round: number) => Promise<LoadResult>): Promise<{ plugin: LoadResult[], hand: LoadResult[], alongside: LoadResult[] }> {
  const pluginRate = (await logout(server, '/Auth/Logout', 20_000, 1)).perSecond
  const handRate = (await logout(server, '/hand/logout', 20_000, 1)).perSecond
  const results = { plugin: [] as LoadResult[], hand: [] as LoadResult[], alongside: [] as LoadResult[] }
  for (let round = 1; round <= rounds; round++) {
    results.plugin.push(await logout(server, '/Auth/Logout', pluginRate, seconds, round, counter))
    results.hand.push(await logout(server, '/hand/logout', handRate, seconds, round, counter))
    if (alongside !== undefined) results.alongside.push(await alongside(round))
  }
  return results
}

/**
 * Refresh at full speed: each connection keeps one session (from a real login) and sends the refresh
 * token the previous answer gave it, as a client does.
 */
export async function refresh (server: Server, refreshTokens: string[], seconds: number, round?: number, counter?: RoundTripCounter): Promise<LoadResult> {
  const result = await counted(counter, async () => await load({
    profile: round === undefined ? undefined : profileName(server, '/Auth/Refresh', round),
    url: server.url,
    path: '/Auth/Refresh',
    method: 'POST',
    connections: refreshTokens.length,
    durationSeconds: seconds,
    headers: { 'content-type': 'application/json' },
    connectionRequests: (connection) => {
      const state = { token: refreshTokens[connection]! }
      return [{
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ refreshToken: state.token }) }),
        onResponse: (status, body) => {
          if (status === 200) {
            const next = (JSON.parse(body) as { refreshToken: string }).refreshToken
            state.token = next
            refreshTokens[connection] = next
          }
        }
      }]
    },
    serverPid: server.pid
  }))
  log(`refresh: ${result.perSecond.toFixed(0)} req/s, statuses ${JSON.stringify(result.statuses)}`)
  return result
}

/**
 * GET /me at the mixed rate during a login flood of `connections` (far beyond what argon2 serves, so the
 * hashing queue stays full and sheds): what an authenticated client sees while the server is overloaded.
 */
export async function meDuringFlood (server: Server, tokens: string[], connections: number, seconds: number, path = '/Auth/Login', body?: (email: string) => object): Promise<{ alone: LoadResult, me: LoadResult, flood: LoadResult }> {
  const probe = async (): Promise<LoadResult> => await paced({
    url: server.url,
    path: '/me',
    ratePerSecond: MIXED_RATE,
    durationSeconds: seconds,
    headers: (n) => ({ authorization: `Bearer ${tokens[n % tokens.length]!}` })
  })
  const alone = await probe()
  // The flood's body is Login's; ForgotPassword reads its e-mail and ignores the rest.
  const flood = load(loginLoad(server, connections, seconds + 1.5, path, body))
  await new Promise(resolve => setTimeout(resolve, 1000))
  const me = await probe()
  const floodResult = await flood
  log(`/me alone p99 ${alone.latency.p99.toFixed(2)} ms; during a ${connections}-connection ${path} flood: p99 ${me.latency.p99.toFixed(2)} ms, ` +
    `statuses ${JSON.stringify(me.statuses)}; flood ${JSON.stringify(floodResult.statuses)}`)
  return { alone, me, flood: floodResult }
}
