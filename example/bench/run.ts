/**
 * `npm run bench`: the plugin against the argon2 ceiling and a hand-written baseline, in one run on one
 * machine. Starts every process it measures, sends traffic to 127.0.0.1 only, prints a markdown table
 * and writes the whole result as JSON (BENCH_RESULTS, default ./bench-results.json).
 *
 * Environment: BENCH_SECONDS (seconds per measured run, default 5), BENCH_THREADPOOL_SIZE (default
 * cores + 1), BENCH_REDIS_URL (default redis://127.0.0.1:6379; unreachable: the Redis rows are skipped),
 * BENCH_RESULTS.
 */
import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, totalmem } from 'node:os'
import { resolve } from 'node:path'
import type autocannon from 'autocannon'
import { Redis } from 'ioredis'
import { defaultHashConcurrency } from '../../lib/hash-queue.js'
import { DEFAULT_ARGON2 } from '../../lib/index.js'
import type { CeilingResult } from './ceiling.js'
import { backgroundCpu, cpuJiffies, cpuTimeOf, memoryOf, runChild, startChild, type Child } from './child.js'
import { probeEnumeration } from './enumeration.js'
import { load, merge, type LoadOptions, type LoadResult } from './load.js'
import { paced } from './paced.js'
import { checkTargets, renderTable, type BenchResults } from './report.js'
import { ACTIVE_ACCOUNTS, activeEmail, activeId, BENCH_PASSWORD, threadPoolSize } from './settings.js'
import { mintAccessToken } from './tokens.js'

const SERVER_SCRIPT = new URL('./server.js', import.meta.url).pathname
const CEILING_SCRIPT = new URL('./ceiling.js', import.meta.url).pathname

const seconds = Number(process.env.BENCH_SECONDS) > 0 ? Number(process.env.BENCH_SECONDS) : 5
const poolSize = threadPoolSize()
const hashConcurrency = defaultHashConcurrency(poolSize)
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const runId = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
const childEnv = { UV_THREADPOOL_SIZE: String(poolSize), NODE_ENV: 'production' }

/** Connections for the throughput runs of cheap routes, and for login floods (enough to keep the hash queue busy, far below its bound). */
const ROUTE_CONNECTIONS = 32
const LOGIN_CONNECTIONS = 16
const OVERLOAD_CONNECTIONS = 1000
/** The fixed request rate of GET /me in the mixed scenario, unloaded and under a login flood. */
const MIXED_RATE = 200
/** Interleaved repetitions of the comparisons. */
const ROUNDS = 3

function log (message: string): void {
  process.stderr.write(`[bench] ${message}\n`)
}

interface Server extends Child {
  url: string
  pid: number
}

async function startServer (env: Record<string, string> = {}): Promise<Server> {
  const child = await startChild(SERVER_SCRIPT, { ...childEnv, ...env }, /bench server listening on (http:\/\/\S+)/)
  return { ...child, url: child.match[1]!, pid: child.process.pid! }
}

async function ceiling (): Promise<CeilingResult> {
  const output = await runChild(CEILING_SCRIPT, [String(hashConcurrency), String(seconds * 1000), '500'], childEnv)
  return JSON.parse(output) as CeilingResult
}

/**
 * Successful logins round-robin over the seeded accounts. Connection k of n logs in as accounts k, k + n,
 * k + 2n …, so no two connections share an e-mail and the per-e-mail limit of attempts in flight never
 * answers; the request bodies are built once.
 */
function loginLoad (server: Server, connections: number, durationSeconds: number, path = '/Auth/Login'): LoadOptions {
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
    serverPid: server.pid
  }
}

/** Real tokens from real logins, for the GET routes (one per connection). */
async function loginTokens (server: Server, count: number): Promise<string[]> {
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

async function expectOk (server: Server, path: string, token: string): Promise<void> {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } })
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`)
}

function routeLoad (server: Server, path: string, tokens: string[], durationSeconds = seconds): LoadOptions {
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
async function interleavedRounds (server: Server, paths: string[], tokens: string[], rounds: number): Promise<Record<string, LoadResult[]>> {
  for (const path of paths) await load(routeLoad(server, path, tokens, 1)) // warm-up
  const results: Record<string, LoadResult[]> = Object.fromEntries(paths.map(path => [path, []]))
  for (let round = 0; round < rounds; round++) {
    for (const path of paths) {
      const result = await load(routeLoad(server, path, tokens))
      log(`${path} round ${round + 1}: ${result.perSecond.toFixed(0)} req/s, statuses ${JSON.stringify(result.statuses)}`)
      results[path]!.push(result)
    }
  }
  return results
}

/** The round with the median throughput. */
function median (results: LoadResult[]): LoadResult {
  return [...results].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(results.length / 2)]!
}

/** GET /me at a fixed rate, alternately alone and during a login flood; latencies pooled per condition. */
async function mixed (server: Server, tokens: string[]): Promise<NonNullable<BenchResults['mixed']>> {
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
  for (let round = 1; round <= 2; round++) {
    unloaded.push(await meAtRate())
    const flood = load({ ...loginLoad(server, LOGIN_CONNECTIONS, seconds + 1.5), keepSamples: true })
    await new Promise(resolve => setTimeout(resolve, 1000))
    loaded.push(await meAtRate())
    floods.push(await flood)
    log(`mixed round ${round}: /me p99 ${unloaded.at(-1)!.latency.p99.toFixed(2)} ms alone, ${loaded.at(-1)!.latency.p99.toFixed(2)} ms during ${floods.at(-1)!.okPerSecond.toFixed(0)} logins/s`)
  }
  return { unloaded: merge(unloaded), loaded: merge(loaded), flood: merge(floods) }
}

/** Logout at full speed: every request spends a token, pre-signed so signing stays off the measured path. */
async function logout (server: Server, expectedPerSecond: number): Promise<LoadResult> {
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

async function redisReachable (): Promise<Redis | undefined> {
  const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.ping()
    return client
  } catch {
    client.disconnect()
    return undefined
  }
}

/** Deletes this run's keys (and only those) from the shared Redis. */
async function dropKeys (client: Redis, prefix: string): Promise<number> {
  let cursor = '0'
  let dropped = 0
  do {
    const [nextCursor, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    cursor = nextCursor
    if (keys.length > 0) dropped += await client.unlink(...keys)
  } while (cursor !== '0')
  return dropped
}

async function main (): Promise<void> {
  const started = Date.now()
  const results: BenchResults = {
    runId,
    date: new Date().toISOString(),
    machine: {
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30 * 10) / 10,
      node: process.version,
      platform: `${process.platform} ${process.arch}`
    },
    settings: {
      secondsPerRun: seconds,
      threadPoolSize: poolSize,
      hashConcurrency,
      argon2: { ...DEFAULT_ARGON2 },
      accounts: ACTIVE_ACCOUNTS,
      routeConnections: ROUTE_CONNECTIONS,
      loginConnections: LOGIN_CONNECTIONS,
      mixedRate: MIXED_RATE,
      overloadConnections: OVERLOAD_CONNECTIONS
    },
    notes: []
  }
  log(`run ${runId}: ${availableParallelism()} cores, UV_THREADPOOL_SIZE=${poolSize}, ${hashConcurrency} hashes at once, ${seconds} s per run`)
  const jiffiesAtStart = cpuJiffies()
  const background: number[] = []
  const sampleBackground = async (): Promise<void> => {
    const busy = await backgroundCpu()
    if (busy !== undefined) background.push(busy)
  }
  await sampleBackground()

  // 1. The ceiling and Login, alternating, so that drift and other processes hit both alike.
  const memory = await startServer()
  try {
    log('login warm-up')
    await load(loginLoad(memory, LOGIN_CONNECTIONS, 2))
    await sampleBackground()
    await load(loginLoad(memory, LOGIN_CONNECTIONS, 1, '/hand/login'))
    const ceilings: CeilingResult[] = []
    const logins: LoadResult[] = []
    const handLogins: LoadResult[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      const limit = await ceiling()
      const login = await load({ ...loginLoad(memory, LOGIN_CONNECTIONS, seconds), keepSamples: true })
      const hand = await load({ ...loginLoad(memory, LOGIN_CONNECTIONS, seconds, '/hand/login'), keepSamples: true })
      log(`round ${round}: argon2 ceiling ${limit.perSecond.toFixed(1)}/s, plugin login ${login.okPerSecond.toFixed(1)}/s ${JSON.stringify(login.statuses)}, ` +
        `hand-written login ${hand.okPerSecond.toFixed(1)}/s ${JSON.stringify(hand.statuses)}`)
      ceilings.push(limit)
      logins.push(login)
      handLogins.push(hand)
    }
    results.ceiling = { runs: ceilings, perSecond: ceilings.reduce((sum, run) => sum + run.verifications, 0) / ceilings.reduce((sum, run) => sum + run.durationMs / 1000, 0) }
    results.login = { ...merge(logins), rounds: logins }
    results.handLogin = { ...merge(handLogins), rounds: handLogins }

    // 2. GET routes: no auth, jwtVerify only, authenticate.
    const tokens = await loginTokens(memory, ROUTE_CONNECTIONS)
    for (const path of ['/open', '/plain', '/me']) await expectOk(memory, path, tokens[0]!)
    await expectOk(memory, '/me', mintAccessToken(activeId(1)))
    log('GET /open, /plain, /me (memory stores)')
    const rounds = await interleavedRounds(memory, ['/open', '/plain', '/me'], tokens, ROUNDS)
    results.routes = { open: median(rounds['/open']!), plain: median(rounds['/plain']!), me: median(rounds['/me']!), rounds }

    // 3. Mixed: /me at a fixed rate, unloaded and during a login flood, alternating.
    results.mixed = await mixed(memory, tokens)

    // 4. Logout, 5. enumeration.
    log('logout (memory)')
    results.logout = { memory: await logout(memory, results.routes.me.perSecond) }
    log('enumeration')
    results.enumeration = await probeEnumeration(memory.url, { workers: hashConcurrency, durationSeconds: seconds + 1, runId })
    results.memoryServer = { ...memoryOf(memory.pid), stats: await (await fetch(`${memory.url}/bench/stats`)).json() }
  } finally {
    await memory.stop()
  }

  // 6. The same with revocations in Redis.
  const redis = await redisReachable()
  if (redis === undefined) {
    results.notes.push(`Redis at ${redisUrl} is not reachable: the Redis rows were skipped.`)
    log(results.notes.at(-1)!)
  } else {
    const prefix = `fastify-password-auth-bench:${runId}:revoked:`
    const server = await startServer({ BENCH_REVOCATIONS: 'redis', BENCH_REDIS_URL: redisUrl, BENCH_REDIS_PREFIX: prefix })
    try {
      const tokens = await loginTokens(server, ROUTE_CONNECTIONS)
      await expectOk(server, '/me', tokens[0]!)
      log('GET /plain, /me (Redis revocations)')
      const rounds = await interleavedRounds(server, ['/plain', '/me'], tokens, 3)
      results.redis = { plain: median(rounds['/plain']!), me: median(rounds['/me']!), rounds }
      log('logout (Redis)')
      results.logout!.redis = await logout(server, results.redis.me.perSecond)
    } finally {
      await server.stop()
      const dropped = await dropKeys(redis, prefix)
      log(`dropped this run's ${dropped} Redis keys`)
      redis.disconnect()
    }
  }

  // 7. Overload: a fresh server, so its peak RSS is this scenario's.
  const overloaded = await startServer()
  try {
    const idle = memoryOf(overloaded.pid)
    log(`overload: ${OVERLOAD_CONNECTIONS} concurrent logins`)
    const result = await load(loginLoad(overloaded, OVERLOAD_CONNECTIONS, seconds * 1.6))
    results.overload = {
      ...result,
      idleRss: idle.rss,
      peakRss: memoryOf(overloaded.pid).peakRss,
      serverCpuMs: cpuTimeOf(overloaded.pid),
      stats: await (await fetch(`${overloaded.url}/bench/stats`)).json()
    }
  } finally {
    await overloaded.stop()
  }

  await sampleBackground()
  results.backgroundCpu = background
  const jiffiesAtEnd = cpuJiffies()
  if (jiffiesAtStart !== undefined && jiffiesAtEnd !== undefined) {
    results.stealShare = (jiffiesAtEnd.steal - jiffiesAtStart.steal) / (jiffiesAtEnd.total - jiffiesAtStart.total)
    if (results.stealShare > 0.02) {
      results.notes.push(`The hypervisor took ${(results.stealShare * 100).toFixed(0)} % of this VM's CPU time during the run (steal): absolute numbers are low and noisy; ratios measured side by side hold better.`)
    }
  }
  const busiest = Math.max(...background)
  if (busiest > 0.1) {
    results.notes.push(`Other processes kept the CPUs up to ${(busiest * 100).toFixed(0)} % busy while the bench was idle: the numbers are skewed; rerun on a quiet machine.`)
  }
  results.targets = checkTargets(results)
  results.totalSeconds = (Date.now() - started) / 1000
  const file = resolve(process.env.BENCH_RESULTS ?? 'bench-results.json')
  await writeFile(file, JSON.stringify(results, null, 2) + '\n')
  console.log(renderTable(results))
  console.log(`\nJSON: ${file} (${results.totalSeconds.toFixed(0)} s in all)`)
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
