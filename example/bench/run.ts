/**
 * `npm run bench`: the plugin against the argon2 ceiling and hand-written baselines, in one run on one
 * machine. Starts every process it measures, sends traffic to 127.0.0.1 only, prints a markdown table
 * and writes the whole result as JSON (BENCH_RESULTS, default ./bench-results.json).
 *
 * Environment: BENCH_SECONDS (seconds per measured run, default 4), BENCH_THREADPOOL_SIZE (the defaults
 * profile's pool, default max(4, cores + 2)), BENCH_REDIS_URL (default redis://127.0.0.1:6379; unreachable: the
 * Redis rows are skipped), BENCH_RESULTS.
 */
import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, totalmem } from 'node:os'
import { resolve } from 'node:path'
import { DEFAULT_ARGON2 } from '../../lib/index.js'
import type { CeilingResult } from './ceiling.js'
import { backgroundCpu, cpuJiffies, cpuTimeOf, memoryOf } from './child.js'
import { probeEnumeration } from './enumeration.js'
import { load, merge, type LoadResult } from './load.js'
import { connectRedis, dropKeys } from './redis.js'
import { checkTargets, renderTable, type BenchResults, type CeilingSummary } from './report.js'
import {
  ceiling, expectOk, interleavedRounds, log, LOGIN_CONNECTIONS, loginLoad, loginTokens, logout, median, mixed, MIXED_RATE,
  ROUTE_CONNECTIONS, startServer, type Server
} from './scenarios.js'
import { ACTIVE_ACCOUNTS, activeId, profiles } from './settings.js'
import { mintAccessToken } from './tokens.js'

const seconds = Number(process.env.BENCH_SECONDS) > 0 ? Number(process.env.BENCH_SECONDS) : 4
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const runId = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
const OVERLOAD_CONNECTIONS = 1000
/** Interleaved repetitions of each comparison. */
const ROUNDS = 3
const MIXED_ROUNDS = 3
const MIXED_SECONDS = Math.max(2, seconds - 1)

const { defaults, tuned } = profiles()

function ceilingSummary (runs: CeilingResult[]): CeilingSummary {
  const verifications = runs.reduce((sum, run) => sum + run.verifications, 0)
  return { runs, perSecond: verifications / runs.reduce((sum, run) => sum + run.durationMs / 1000, 0) }
}

async function stopAll (servers: Server[]): Promise<void> {
  await Promise.all(servers.map(async server => { await server.stop() }))
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
      rounds: ROUNDS,
      argon2: { ...DEFAULT_ARGON2 },
      accounts: ACTIVE_ACCOUNTS,
      routeConnections: ROUTE_CONNECTIONS,
      loginConnections: LOGIN_CONNECTIONS,
      mixedRate: MIXED_RATE,
      overloadConnections: OVERLOAD_CONNECTIONS
    },
    profiles: { defaults, tuned },
    notes: []
  }
  log(`run ${runId}: ${availableParallelism()} cores, ${seconds} s per run; defaults: ${defaults.description}; tuned: ${tuned.description}`)
  const jiffiesAtStart = cpuJiffies()
  const background: number[] = []
  const sampleBackground = async (): Promise<void> => {
    await new Promise(resolve => setTimeout(resolve, 500)) // let the last requests of a run drain
    const busy = await backgroundCpu()
    if (busy !== undefined) background.push(busy)
  }
  await sampleBackground()

  // Both profiles' servers run side by side; the idle one costs nothing.
  const server = await startServer(defaults)
  const tunedServer = await startServer(tuned)
  try {
    // 1. The argon2 ceiling, each profile's Login and the hand-written login, alternating in rounds, so
    //    that drift and other processes hit them alike. The profiles share their pool and concurrency, so
    //    one ceiling serves both.
    log('login warm-up')
    for (const [target, path] of [[server, '/Auth/Login'], [tunedServer, '/Auth/Login'], [server, '/hand/login']] as const) {
      await load(loginLoad(target, LOGIN_CONNECTIONS, 1.5, path))
    }
    await sampleBackground()
    const rounds = { ceiling: [] as CeilingResult[], defaults: [] as LoadResult[], tuned: [] as LoadResult[], hand: [] as LoadResult[] }
    for (let round = 1; round <= ROUNDS; round++) {
      rounds.ceiling.push(await ceiling(defaults, seconds))
      rounds.defaults.push(await load(loginLoad(server, LOGIN_CONNECTIONS, seconds)))
      rounds.tuned.push(await load(loginLoad(tunedServer, LOGIN_CONNECTIONS, seconds)))
      rounds.hand.push(await load(loginLoad(server, LOGIN_CONNECTIONS, seconds, '/hand/login')))
      const rate = (list: Array<{ perSecond?: number, okPerSecond?: number }>): string => (list.at(-1)!.okPerSecond ?? list.at(-1)!.perSecond!).toFixed(1)
      log(`round ${round}: ceiling ${rate(rounds.ceiling)}/s, login ${rate(rounds.defaults)}/s, tuned login ${rate(rounds.tuned)}/s, ` +
        `hand-written login ${rate(rounds.hand)}/s`)
    }
    results.ceiling = ceilingSummary(rounds.ceiling)
    results.login = {
      defaults: { ...merge(rounds.defaults), rounds: rounds.defaults },
      tuned: { ...merge(rounds.tuned), rounds: rounds.tuned },
      hand: { ...merge(rounds.hand), rounds: rounds.hand }
    }

    // 2. GET routes: no auth, jwtVerify only, authenticate.
    const tokens = await loginTokens(server, ROUTE_CONNECTIONS)
    for (const path of ['/open', '/plain', '/me']) await expectOk(server, path, tokens[0]!)
    await expectOk(server, '/me', mintAccessToken(activeId(1)))
    log('GET /open, /plain, /me (memory stores)')
    const routeRounds = await interleavedRounds(server, ['/open', '/plain', '/me'], tokens, ROUNDS, seconds)
    results.routes = { open: median(routeRounds['/open']!), plain: median(routeRounds['/plain']!), me: median(routeRounds['/me']!), rounds: routeRounds }

    // 3. Mixed: /me at a steady rate, alone and during a login flood, for each profile.
    log('mixed (defaults)')
    const mixedDefaults = await mixed(server, tokens, MIXED_ROUNDS, MIXED_SECONDS)
    log('mixed (tuned)')
    const mixedTuned = await mixed(tunedServer, await loginTokens(tunedServer, 8), MIXED_ROUNDS, MIXED_SECONDS)
    results.mixed = { defaults: mixedDefaults, tuned: mixedTuned }

    // 4. Logout, 5. enumeration.
    log('logout (memory)')
    results.logout = { memory: await logout(server, results.routes.me.perSecond, seconds) }
    log('enumeration')
    results.enumeration = await probeEnumeration(server.url, { workers: defaults.hashConcurrency, durationSeconds: seconds * 1.5, runId })
    results.serverStats = await (await fetch(`${server.url}/bench/stats`)).json()
  } finally {
    await stopAll([server, tunedServer])
  }

  // 6. GET /me and Logout with revocations in Redis.
  const redis = await connectRedis(redisUrl)
  if (redis === undefined) {
    results.notes.push(`Redis at ${redisUrl} is not reachable: the Redis rows were skipped.`)
    log(results.notes.at(-1)!)
  } else {
    const prefix = `fastify-password-auth-bench:${runId}:revoked:`
    const redisServer = await startServer(defaults, { BENCH_REVOCATIONS: 'redis', BENCH_REDIS_URL: redisUrl, BENCH_REDIS_PREFIX: prefix })
    try {
      const tokens = await loginTokens(redisServer, ROUTE_CONNECTIONS)
      await expectOk(redisServer, '/me', tokens[0]!)
      log('GET /plain, /me (Redis revocations)')
      const rounds = await interleavedRounds(redisServer, ['/plain', '/me'], tokens, ROUNDS, seconds)
      results.redis = { plain: median(rounds['/plain']!), me: median(rounds['/me']!), rounds }
      log('logout (Redis)')
      results.logout!.redis = await logout(redisServer, results.redis.me.perSecond, seconds)
    } finally {
      await redisServer.stop()
      log(`dropped this run's ${await dropKeys(redis, prefix)} Redis keys`)
      redis.disconnect()
    }
  }

  // 7. Overload: a fresh server, so its peak RSS is this scenario's.
  const overloaded = await startServer(defaults)
  try {
    const idle = memoryOf(overloaded.pid)
    log(`overload: ${OVERLOAD_CONNECTIONS} concurrent logins`)
    const result = await load(loginLoad(overloaded, OVERLOAD_CONNECTIONS, seconds * 1.5))
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
      results.notes.push(`The hypervisor gave ${(results.stealShare * 100).toFixed(0)} % of this VM's CPU time to others during the run (steal): absolute numbers are low and noisy; ratios measured side by side hold better.`)
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
