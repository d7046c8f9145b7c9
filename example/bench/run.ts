/**
 * `npm run bench`: the plugin against the argon2 ceiling and hand-written baselines, in one run on one
 * machine. Starts every process it measures, sends traffic to 127.0.0.1 only, prints a markdown table
 * and writes the whole result as JSON. What each row measures: example/bench/README.md.
 *
 * Environment: BENCH_SECONDS (seconds per measured run, default 4), BENCH_ONLY (a comma-separated list of
 * sections: scale, login, memory, mixed, logout, refresh, enumeration, redis, postgres, flood, overload, lockout,
 * startup, forgot, register, mfa, breach, passkey, example, statements, sql; default all), BENCH_THREADPOOL_SIZE (the defaults profile's libuv pool, for the hand-written login, default max(4, cores)), BENCH_REDIS_URL
 * (default redis://127.0.0.1:6379), BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
 * and BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306/test): unreachable, their rows are skipped; BENCH_PG_POOL (the pg Pool's max, default 16), BENCH_PROFILE_DIR (a
 * CPU profile of the server per measured run; BENCH_PROFILE_INTERVAL_US its sampling interval, default 100), BENCH_RESULTS (default ./bench-results.json).
 */
import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, totalmem } from 'node:os'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Redis } from 'ioredis'
import { DEFAULT_ARGON2 } from '../../lib/password/argon2-options.js'
import type { CeilingResult } from './ceiling.js'
import { breachSection } from './breach.js'
import { backgroundCpu, cpuJiffies, runChild } from './child.js'
import { probeEnumeration } from './enumeration.js'
import { exampleSection } from './example-section.js'
import { load, merge, type LoadResult } from './load.js'
import { lockoutAttack } from './lockout.js'
import { loginMfaRound } from './login-mfa.js'
import { overload, startExampleServer } from './overload.js'
import { passkeySection } from './passkey.js'
import { connectPostgres, dropSchema } from './postgres.js'
import { connectRedis, dropKeys } from './redis.js'
import { checkTargets, renderTable, type BenchResults, type CeilingSummary, type LogoutPair, type RouteSet, type StartupRun } from './report.js'
import { RoundTripCounter } from './round-trips.js'
import {
  ceiling, expectOk, interleavedRounds, log, LOGIN_CONNECTIONS, loginLoad, loginSessions, logoutRounds, median, meDuringFlood, mixed,
  MIXED_RATE, reauthenticateLoad, refresh, registerLoad, ROUTE_CONNECTIONS, startServer, type Server
} from './scenarios.js'
import { scale } from './scale.js'
import { sqlSection } from './sql-section.js'
import { mysqlReachable, type SqlDialect } from './sql-stores.js'
import { statementsPair } from './statements.js'
import { ACTIVE_ACCOUNTS, BENCH_PASSWORD, profiles } from './settings.js'

const env = process.env
const seconds = Number(env.BENCH_SECONDS) > 0 ? Number(env.BENCH_SECONDS) : 4
const redisUrl = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const databaseUrl = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const mysqlUrl = env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'
const pgPoolSize = Number(env.BENCH_PG_POOL) > 0 ? Number(env.BENCH_PG_POOL) : 16
const runId = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
const SECTIONS = ['scale', 'login', 'memory', 'mixed', 'logout', 'refresh', 'enumeration', 'redis', 'postgres', 'flood', 'overload', 'lockout', 'startup', 'forgot', 'register', 'mfa', 'breach', 'passkey', 'example', 'statements', 'sql'] as const
type Section = typeof SECTIONS[number]
const only = (env.BENCH_ONLY ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '')
for (const name of only) if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`BENCH_ONLY: unknown section "${name}"; known: ${SECTIONS.join(', ')}`)
const wanted = (section: Section): boolean => only.length === 0 || only.includes(section)
/** Connections of the login flood GET /me is probed during (far beyond what argon2 serves). */
const FLOOD_CONNECTIONS = 100
const OVERLOAD_CONNECTIONS = 1000
/** Interleaved repetitions of each comparison. */
const ROUNDS = 3
const MIXED_ROUNDS = 3
/**
 * The example section's pairs (example-section.ts): its targets are ratios close to the machine's noise, so many
 * short pairs. One route's speed here drifts by a third from one run to the next; five 4-s pairs read the same
 * hand-written route 0.75–0.89 × itself in another process, forty 1-s pairs 0.97–1.04 × (example/bench/README.md).
 */
const EXAMPLE_ROUNDS = 15
const EXAMPLE_SECONDS = Math.max(1, seconds / 4)
const MIXED_SECONDS = Math.max(2, seconds - 1)

const { defaults, tuned } = profiles()
const STARTUP_SCRIPT = fileURLToPath(new URL('./startup.js', import.meta.url))

function ceilingSummary (runs: CeilingResult[]): CeilingSummary {
  const verifications = runs.reduce((sum, run) => sum + run.verifications, 0)
  return { runs, perSecond: verifications / runs.reduce((sum, run) => sum + run.durationMs / 1000, 0) }
}

async function stats (server: Server): Promise<{ stores: string } & Record<string, unknown>> {
  return await (await fetch(`${server.url}/bench/stats`)).json() as { stores: string } & Record<string, unknown>
}

/** GET /open, /plain and /me interleaved on one server, store round trips counted. */
async function routeSet (server: Server, tokens: string[], counter: RoundTripCounter): Promise<RouteSet> {
  for (const path of ['/open', '/plain', '/me']) await expectOk(server, path, tokens[0]!)
  const { stores } = await stats(server)
  log(`GET /open, /plain, /me (${stores})`)
  const rounds = await interleavedRounds(server, ['/open', '/plain', '/me'], tokens, ROUNDS, seconds, counter)
  return { stores, open: median(rounds['/open']!), plain: median(rounds['/plain']!), me: median(rounds['/me']!), rounds }
}

/** Logout against the hand-written one and, when wanted, Refresh (no argon2 either) against Logout: A B C, A B C … */
async function logoutPair (server: Server, counter: RoundTripCounter): Promise<LogoutPair> {
  const { stores } = await stats(server)
  log(`logout${wanted('refresh') ? ' and refresh' : ''} (${stores})`)
  let alongside: ((round: number) => Promise<LoadResult>) | undefined
  if (wanted('refresh')) {
    // Fresh sessions each round (accounts 300 …, apart from the GET routes' ones): the last answers of a
    // run never reach the client, and the Logout runs in between outlast the grace period, so a session
    // carried over would be ended as a replay.
    const sessions = async (round: number): Promise<string[]> =>
      (await loginSessions(server, ROUTE_CONNECTIONS, 300 + round * ROUTE_CONNECTIONS)).map(({ refreshToken }) => refreshToken)
    await refresh(server, await sessions(0), 1)
    alongside = async (round) => await refresh(server, await sessions(round), seconds, round, counter)
  }
  const rounds = await logoutRounds(server, ROUNDS, seconds, counter, alongside)
  return {
    stores,
    plugin: median(rounds.plugin),
    hand: median(rounds.hand),
    ...rounds.alongside.length === 0 ? {} : { refresh: median(rounds.alongside) },
    rounds: { plugin: rounds.plugin, hand: rounds.hand, ...rounds.alongside.length === 0 ? {} : { refresh: rounds.alongside } }
  }
}

/** The server with sessions in Redis (and accounts in `accounts`): its GET routes, Logout and Refresh. */
async function redisServer (results: BenchResults, redis: Redis, accounts: 'memory' | 'postgres'): Promise<void> {
  const prefix = `fastify-password-auth-bench:${runId}:${accounts}:`
  const schema = `fpa_bench_${runId.replace(/\W/g, '_')}`
  const server = await startServer(defaults, {
    BENCH_SESSIONS: 'redis',
    BENCH_REDIS_URL: redisUrl,
    BENCH_REDIS_PREFIX: prefix,
    BENCH_ACCOUNTS: accounts,
    BENCH_DATABASE_URL: databaseUrl,
    BENCH_PG_SCHEMA: schema,
    BENCH_PG_POOL: String(pgPoolSize)
  }, accounts === 'memory' ? 'redis' : 'postgres')
  const counter = new RoundTripCounter(server.url, redis)
  try {
    const tokens = (await loginSessions(server, ROUTE_CONNECTIONS)).map(({ accessToken }) => accessToken)
    results.routes = { ...results.routes, [accounts === 'memory' ? 'redis' : 'postgres']: await routeSet(server, tokens, counter) }
    if (accounts === 'memory' && (wanted('logout') || wanted('refresh'))) results.logout = { ...results.logout, redis: await logoutPair(server, counter) }
  } finally {
    await server.stop()
    log(`dropped this run's ${await dropKeys(redis, prefix)} Redis keys`)
  }
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
      sections: only.length === 0 ? [...SECTIONS] : only,
      argon2: { ...DEFAULT_ARGON2 },
      accounts: ACTIVE_ACCOUNTS,
      routeConnections: ROUTE_CONNECTIONS,
      loginConnections: LOGIN_CONNECTIONS,
      mixedRate: MIXED_RATE,
      floodConnections: FLOOD_CONNECTIONS,
      overloadConnections: OVERLOAD_CONNECTIONS,
      pgPoolSize
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

  // 0. Login at the machine's full parallelism against the ceiling and the hand-written login, on
  //    servers of its own (scale.ts), before the others start.
  if (wanted('scale')) {
    results.scale = await scale(seconds, ROUNDS)
    await sampleBackground()
  }

  // Both profiles' servers run side by side; the idle one costs nothing.
  const server = await startServer(defaults, {}, 'memory')
  const tunedServer = await startServer(tuned, {}, 'tuned')
  try {
    if (wanted('login')) {
      // 1. The argon2 ceiling, each profile's Login and the hand-written login, alternating in rounds, so
      //    that drift and other processes hit them alike. The profiles share their pool and concurrency, so
      //    one ceiling serves both.
      //    Register (one argon2 hash) and Reauthenticate (Login's check, behind the guard) take part in
      //    every round too.
      log('login warm-up')
      // Sessions of accounts 600 … for Reauthenticate: their own e-mails, so no throttle answers.
      const reauthTokens = (await loginSessions(server, LOGIN_CONNECTIONS, 600)).map(({ accessToken }) => accessToken)
      for (const options of [loginLoad(server, LOGIN_CONNECTIONS, 1.5), loginLoad(tunedServer, LOGIN_CONNECTIONS, 1.5),
        loginLoad(server, LOGIN_CONNECTIONS, 1.5, '/hand/login'), registerLoad(server, LOGIN_CONNECTIONS, 1.5), reauthenticateLoad(server, reauthTokens, 1.5)]) {
        await load(options)
      }
      await sampleBackground()
      const rounds = {
        ceiling: [] as CeilingResult[], defaults: [] as LoadResult[], tuned: [] as LoadResult[], hand: [] as LoadResult[], register: [] as LoadResult[], reauthenticate: [] as LoadResult[]
      }
      for (let round = 1; round <= ROUNDS; round++) {
        rounds.ceiling.push(await ceiling(defaults, seconds))
        rounds.defaults.push(await load(loginLoad(server, LOGIN_CONNECTIONS, seconds)))
        rounds.tuned.push(await load(loginLoad(tunedServer, LOGIN_CONNECTIONS, seconds)))
        rounds.hand.push(await load(loginLoad(server, LOGIN_CONNECTIONS, seconds, '/hand/login')))
        rounds.register.push(await load(registerLoad(server, LOGIN_CONNECTIONS, seconds)))
        rounds.reauthenticate.push(await load(reauthenticateLoad(server, reauthTokens, seconds)))
        const rate = (list: Array<{ perSecond?: number, okPerSecond?: number }>): string => (list.at(-1)!.okPerSecond ?? list.at(-1)!.perSecond!).toFixed(1)
        log(`round ${round}: ceiling ${rate(rounds.ceiling)}/s, login ${rate(rounds.defaults)}/s, tuned login ${rate(rounds.tuned)}/s, ` +
          `hand-written login ${rate(rounds.hand)}/s, register ${rate(rounds.register)}/s, reauthenticate ${rate(rounds.reauthenticate)}/s`)
      }
      results.ceiling = ceilingSummary(rounds.ceiling)
      results.login = {
        defaults: { ...merge(rounds.defaults), rounds: rounds.defaults },
        tuned: { ...merge(rounds.tuned), rounds: rounds.tuned },
        hand: { ...merge(rounds.hand), rounds: rounds.hand },
        register: { ...merge(rounds.register), rounds: rounds.register },
        reauthenticate: { ...merge(rounds.reauthenticate), rounds: rounds.reauthenticate }
      }
    }

    // 2. GET routes on memory stores; 3. mixed; 4. Refresh; 5. enumeration; 6. /me during a flood; 7. Logout.
    const tokens = (await loginSessions(server, ROUTE_CONNECTIONS)).map(({ accessToken }) => accessToken)
    const counter = new RoundTripCounter(server.url)
    if (wanted('memory')) results.routes = { memory: await routeSet(server, tokens, counter) }
    if (wanted('mixed')) {
      log('mixed (defaults)')
      const mixedDefaults = await mixed(server, tokens, MIXED_ROUNDS, MIXED_SECONDS)
      log('mixed (tuned)')
      const mixedTuned = await mixed(tunedServer, (await loginSessions(tunedServer, 8)).map(({ accessToken }) => accessToken), MIXED_ROUNDS, MIXED_SECONDS)
      results.mixed = { defaults: mixedDefaults, tuned: mixedTuned }
    }
    if (wanted('enumeration')) {
      log('enumeration')
      results.enumeration = await probeEnumeration(server.url, { workers: defaults.hashThreads, durationSeconds: seconds * 1.5, runId })
      log('enumeration: ChangeEmail')
      results.changeEmailEnumeration = await probeEnumeration(server.url, { route: 'changeEmail', workers: defaults.hashThreads, durationSeconds: seconds * 1.5, runId })
    }
    if (wanted('forgot') || wanted('register')) {
      // What any HTTP flood at that rate costs /me on this machine: POSTs to a route that does not exist.
      log('GET /me during a flood of 404s (the baseline of the ForgotPassword and registration floods)')
      results.notFoundFlood = { connections: FLOOD_CONNECTIONS, ...await meDuringFlood(server, tokens, FLOOD_CONNECTIONS, seconds, '/bench/no-such-route') }
    }
    if (wanted('register')) {
      log('Register: enumeration, then GET /me alone and during a registration flood')
      // Every request is an argon2 hash: a longer window, so each branch's median rests on several hundred samples.
      results.registerEnumeration = await probeEnumeration(server.url, { route: 'register', workers: defaults.hashThreads, durationSeconds: seconds * 3, runId })
      results.registerFlood = {
        connections: FLOOD_CONNECTIONS,
        ...await meDuringFlood(server, tokens, FLOOD_CONNECTIONS, seconds, '/Auth/Register', (email) => ({ email, password: BENCH_PASSWORD, confirmPassword: BENCH_PASSWORD }))
      }
    }
    if (wanted('forgot')) {
      log('ForgotPassword: enumeration, then GET /me alone and during a ForgotPassword flood')
      results.forgotEnumeration = await probeEnumeration(server.url, { route: 'forgot', workers: defaults.hashThreads, durationSeconds: seconds * 1.5, runId })
      results.forgotFlood = { connections: FLOOD_CONNECTIONS, ...await meDuringFlood(server, tokens, FLOOD_CONNECTIONS, seconds, '/Auth/ForgotPassword') }
    }
    if (wanted('flood')) {
      log(`GET /me during a ${FLOOD_CONNECTIONS}-connection login flood`)
      results.floodProbe = { connections: FLOOD_CONNECTIONS, ...await meDuringFlood(server, tokens, FLOOD_CONNECTIONS, seconds) }
    }
    if (wanted('mfa')) {
      log('LoginMfa against Refresh, alternating')
      await loginMfaRound(server, 0) // warm-up, not counted
      results.loginMfa = []
      for (let round = 1; round <= ROUNDS; round++) results.loginMfa.push(await loginMfaRound(server, round))
    }
    if (wanted('passkey')) {
      log('passkey sign-ins (LoginOptions + LoginPasskey) against Refresh, alternating')
      results.passkey = await passkeySection(server, ROUNDS)
    }
    if (wanted('example')) {
      log('the example server (npm start) against the hand-written routes: GET /me, Logout')
      results.example = await exampleSection(server, tokens, runId, EXAMPLE_ROUNDS, EXAMPLE_SECONDS)
    }
    results.serverStats = await stats(server)
    // Last on this server: every logout spends a session the bench created, and the memory store keeps
    // them (as tombstones) in the heap every later row would carry.
    if (wanted('logout') || wanted('refresh')) results.logout = { memory: await logoutPair(server, counter) }
  } finally {
    await Promise.all([server.stop(), tunedServer.stop()])
  }

  // 8. Sessions in Redis; 9. accounts in PostgreSQL and sessions in Redis (the README's production wiring).
  if (wanted('redis') || wanted('postgres') || wanted('statements')) {
    const redis = await connectRedis(redisUrl)
    if (redis === undefined) {
      results.notes.push(`Redis at ${redisUrl} is not reachable: the Redis and PostgreSQL rows were skipped.`)
      log(results.notes.at(-1)!)
    } else {
      try {
        if (wanted('redis')) await redisServer(results, redis, 'memory')
        if (wanted('postgres') || wanted('statements')) {
          const pg = await connectPostgres(databaseUrl)
          if (pg === undefined) {
            results.notes.push(`PostgreSQL at ${databaseUrl} is not reachable: the PostgreSQL rows were skipped.`)
            log(results.notes.at(-1)!)
          } else {
            const schema = `fpa_bench_${runId.replace(/\W/g, '_')}`
            const prefix = (label: string): string => `fastify-password-auth-bench:${runId}:${label}:`
            try {
              if (wanted('postgres')) await redisServer(results, redis, 'postgres')
              if (wanted('statements')) {
                log('GET /me with named and unnamed PostgreSQL statements, side by side')
                results.statements = await statementsPair({
                  profile: defaults,
                  env: { BENCH_SESSIONS: 'redis', BENCH_REDIS_URL: redisUrl, BENCH_ACCOUNTS: 'postgres', BENCH_DATABASE_URL: databaseUrl, BENCH_PG_POOL: String(pgPoolSize) },
                  schema: (label) => `${schema}_${label}`,
                  prefix,
                  rounds: ROUNDS,
                  seconds,
                  connections: ROUTE_CONNECTIONS
                })
              }
            } finally {
              for (const label of ['named', 'unnamed']) {
                await dropSchema(pg, `${schema}_${label}`)
                await dropKeys(redis, prefix(label))
              }
              await dropSchema(pg, schema)
              await pg.end()
            }
          }
        }
      } finally {
        redis.disconnect()
      }
    }
  }

  // 9b. Login, GET /me and Refresh with every store in PostgreSQL, SQLite and MySQL, A B C.
  if (wanted('sql')) {
    const dialects: SqlDialect[] = ['sqlite']
    const pg = await connectPostgres(databaseUrl)
    if (pg === undefined) results.notes.push(`PostgreSQL at ${databaseUrl} is not reachable: the sql section ran without it.`)
    else dialects.push('postgres')
    await pg?.end()
    if (await mysqlReachable(mysqlUrl)) dialects.push('mysql')
    else results.notes.push(`MySQL at ${mysqlUrl} is not reachable: the sql section ran without it.`)
    log(`Login, GET /me and Refresh with every store in ${dialects.join(', ')}, interleaved`)
    results.sql = await sqlSection({
      profile: defaults,
      dialects,
      env: { BENCH_DATABASE_URL: databaseUrl, BENCH_MYSQL_URL: mysqlUrl, BENCH_PG_POOL: String(pgPoolSize) },
      label: (dialect) => `fpa_bench_${runId.replace(/\W/g, '_')}_${dialect}`,
      rounds: ROUNDS,
      seconds
    })
    await sampleBackground()
  }

  // 10. Overload: fresh processes, so each peak RSS is this scenario's: the bench server, then the
  //     example server as `npm start` runs it.
  if (wanted('overload')) {
    const overloaded = await startServer(defaults, {}, 'overload')
    try {
      const result = await overload(overloaded, OVERLOAD_CONNECTIONS, seconds * 1.5, async () => (await stats(overloaded)).peakRss as number | undefined)
      results.overload = { ...result, stats: await stats(overloaded) }
    } finally {
      await overloaded.stop()
    }
    const example = await startExampleServer(runId)
    try {
      results.overloadExample = await overload(example, OVERLOAD_CONNECTIONS, seconds * 1.5)
    } finally {
      await example.stop()
    }
  }

  // 11. The breached-password check: Login with a warm cache against Login without it; Login while the
  //     range service hangs. Servers of its own.
  if (wanted('breach')) {
    results.breach = await breachSection(defaults, seconds, ROUNDS)
    await sampleBackground()
  }

  // 12. The lockout attack with and without a known device; 13. start-up cost of the common-password list.
  if (wanted('lockout')) {
    log('lockout attack (blocks of 1 s)')
    results.lockout = await lockoutAttack()
  }
  if (wanted('startup')) {
    log('start-up: registration with and without the common-password list, 5 fresh processes each')
    const runs: StartupRun[] = []
    for (let i = 0; i < 5; i++) {
      for (const mode of ['common', 'no-common']) {
        runs.push(JSON.parse(await runChild(STARTUP_SCRIPT, [mode], { NODE_OPTIONS: '--expose-gc' })) as StartupRun)
      }
    }
    results.startup = runs
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
  const file = resolve(env.BENCH_RESULTS ?? 'bench-results.json')
  await writeFile(file, JSON.stringify(results, null, 2) + '\n')
  console.log(renderTable(results))
  console.log(`\nJSON: ${file} (${results.totalSeconds.toFixed(0)} s in all)`)
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
