/** The bench's result document, the issue's targets checked against it, and its markdown table. */
import type { BreachResult } from './breach.js'
import type { CeilingResult } from './ceiling.js'
import type { EnumerationResult } from './enumeration.js'
import type { ExampleRounds } from './example-section.js'
import type { LoadResult } from './load.js'
import type { LockoutResult } from './lockout.js'
import type { LoginMfaPair } from './login-mfa.js'
import type { OverloadResult } from './overload.js'
import type { PasskeyResult } from './passkey.js'
import { okRates, pairedRatio, pairedText, type PairedRatio } from './pairs.js'
import { total } from './round-trips.js'
import { pooled, type ScaleResult } from './scale.js'
import type { MixedResult } from './scenarios.js'
import type { Profile } from './settings.js'
import type { SqlSection } from './sql-section.js'
import type { StatementsPair } from './statements.js'

export interface CeilingSummary {
  runs: CeilingResult[]
  /** All rounds' verifications over all rounds' time. */
  perSecond: number
}

type Rounds = LoadResult & { rounds: LoadResult[] }

/** GET /open, /plain and /me on one server, interleaved: the median round of each, and every round. */
export interface RouteSet {
  /** What the server's stores run on. */
  stores: string
  open: LoadResult
  plain: LoadResult
  me: LoadResult
  rounds: Record<string, LoadResult[]>
}

/** The plugin's Logout, the hand-written one and Refresh, interleaved: the median round of each, and every round. */
export interface LogoutPair {
  stores: string
  plugin: LoadResult
  hand: LoadResult
  refresh?: LoadResult
  rounds: { plugin: LoadResult[], hand: LoadResult[], refresh?: LoadResult[] }
}

export interface BenchResults {
  runId: string
  date: string
  machine: { cpus: number, cpuModel: string, memoryGiB: number, node: string, platform: string }
  settings: Record<string, unknown> & { argon2: { memoryCost: number, timeCost: number, parallelism: number }, mixedRate: number, accounts: number }
  profiles: Record<Profile['name'], Profile>
  notes: string[]
  /** Login at full parallelism (4 × cores connections) against the ceiling and the hand-written login (scale.ts). */
  scale?: ScaleResult
  ceiling?: CeilingSummary
  /** Each round: the ceiling, then Login (both profiles), the hand-written login, Register and Reauthenticate. */
  login?: { defaults: Rounds, tuned: Rounds, hand: Rounds, register?: Rounds, reauthenticate?: Rounds }
  routes?: { memory?: RouteSet, redis?: RouteSet, postgres?: RouteSet }
  /** GET /me with unnamed statements (preparedStatements: false) against named ones, A B A B (statements.ts). */
  statements?: StatementsPair
  /** Login, GET /me and Refresh with every store in PostgreSQL, SQLite and MySQL, A B C (sql-section.ts). */
  sql?: SqlSection
  mixed?: Record<Profile['name'], MixedResult>
  logout?: { memory?: LogoutPair, redis?: LogoutPair }
  /** LoginMfa and Refresh, alternating, on the same connections (example/bench/login-mfa.ts). */
  loginMfa?: LoginMfaPair[]
  enumeration?: EnumerationResult
  /** ForgotPassword's answers for an unknown e-mail, an active and an inactive account. */
  forgotEnumeration?: EnumerationResult
  /** GET /me at the mixed rate alone, then during a ForgotPassword flood. */
  forgotFlood?: { connections: number, alone: LoadResult, me: LoadResult, flood: LoadResult }
  /** GET /me alone, then during a flood of POSTs to a route that does not exist (404): the baseline of the floods below. */
  notFoundFlood?: { connections: number, alone: LoadResult, me: LoadResult, flood: LoadResult }
  /** Register's answers for a new, a pending, a taken and an inactive address. */
  registerEnumeration?: EnumerationResult
  /** GET /me alone, then during a registration flood (argon2 on every request: shed with 503). */
  registerFlood?: { connections: number, alone: LoadResult, me: LoadResult, flood: LoadResult }
  /** GET /me at the mixed rate during a login flood far beyond argon2's rate. */
  floodProbe?: { connections: number, me: LoadResult, flood: LoadResult }
  /** 1000 concurrent logins on a fresh bench server, and on a fresh example server (`npm start`). */
  overload?: OverloadResult
  overloadExample?: OverloadResult
  lockout?: LockoutResult
  /** Fresh processes registering the plugin, with the common-password list on and off. */
  startup?: StartupRun[]
  /** The breached-password check: Login with a warm cache against Login without it; Login while the range service hangs (breach.ts). */
  breach?: BreachResult
  /** ChangeEmail's answers for a free, a pending, a taken and the account's own address (contract §19). */
  changeEmailEnumeration?: EnumerationResult
  /** Passkey sign-ins (LoginOptions + LoginPasskey) and Refresh, alternating, on the same connections (passkey.ts). */
  passkey?: PasskeyResult
  /** The example server as `npm start` runs it against the bench server's hand-written routes (example-section.ts). */
  example?: ExampleRounds
  serverStats?: unknown
  /** Share of all CPUs busy with other processes, sampled while the bench was idle. */
  backgroundCpu?: number[]
  /** Share of the machine's CPU time the hypervisor gave to others during the run. */
  stealShare?: number
  targets?: Target[]
  totalSeconds?: number
}

export type TargetId = 'scale-ceiling' | 'scale-hand' | 'login-defaults' | 'login-tuned' | 'login-hand' | 'register' | 'reauthenticate' | 'me-memory' | 'me-redis' | 'round-trips' | 'logout' | 'refresh' | 'login-mfa' |
  'mixed-defaults' | 'mixed-tuned' | 'overload' | 'overload-rss' | 'overload-rss-example' | 'enumeration' | 'forgot-enumeration' | 'forgot-flood' | 'register-enumeration' | 'register-flood' | 'lockout' |
  'breach-login' | 'breach-hang' | 'change-email-enumeration' | 'example-me' | 'example-logout'

/** One fresh process: plugin registration and ready, and memory after a GC. */
export interface StartupRun { common: boolean, ms: number, rss: number, heapUsed: number, rssGrowth: number, heapGrowth: number }

export interface Target {
  id: TargetId
  name: string
  value: number
  target: string
  met: boolean
  /** A ratio target's least value. */
  min?: number
}

const LOGIN_STATUSES = new Set(['200', '401', '429', '503'])
/** The overload scenario's memory bound, in bytes (200 MB). */
export const OVERLOAD_RSS_LIMIT = 200e6
/** Round trips counted by the server include the few requests still in flight when a run stops. */
const ONE = 1.01

/** The issue's targets, from the measured numbers. */
/**
 * Every ratio the bench reports, from the runs measured side by side: the median pair with its range. The
 * ceiling's rounds pair with the routes' rounds of the same index.
 */
export type RatioId = TargetId | 'example-me-bench' | 'example-logout-bench' | 'example-hand-logout' | 'example-logout-own-hand' | 'login-tuned-hand' | 'scale-hand-ceiling' | 'scale-hand-default' | 'scale-hand-default-ceiling' | 'passkey' | 'passkey-cpu'

export function pairedRatios (r: BenchResults): Partial<Record<RatioId, PairedRatio>> {
  const ratios: Partial<Record<RatioId, PairedRatio>> = {}
  if (r.scale !== undefined) {
    const ceiling = r.scale.ceiling.map((run) => run.perSecond)
    const login = okRates(r.scale.login)
    ratios['scale-ceiling'] = pairedRatio(login, ceiling)
    ratios['scale-hand'] = pairedRatio(login, okRates(r.scale.handFull))
    ratios['scale-hand-ceiling'] = pairedRatio(okRates(r.scale.handFull), ceiling)
    ratios['scale-hand-default'] = pairedRatio(login, okRates(r.scale.handDefault))
    ratios['scale-hand-default-ceiling'] = pairedRatio(okRates(r.scale.handDefault), ceiling)
  }
  if (r.login !== undefined) {
    const ceiling = r.ceiling?.runs.map((run) => run.perSecond)
    const hand = okRates(r.login.hand.rounds)
    if (ceiling !== undefined) {
      ratios['login-defaults'] = pairedRatio(okRates(r.login.defaults.rounds), ceiling)
      ratios['login-tuned'] = pairedRatio(okRates(r.login.tuned.rounds), ceiling)
      if (r.login.register !== undefined) ratios.register = pairedRatio(okRates(r.login.register.rounds), ceiling)
    }
    ratios['login-hand'] = pairedRatio(okRates(r.login.defaults.rounds), hand)
    ratios['login-tuned-hand'] = pairedRatio(okRates(r.login.tuned.rounds), hand)
    if (r.login.reauthenticate !== undefined) ratios.reauthenticate = pairedRatio(okRates(r.login.reauthenticate.rounds), hand)
  }
  const { memory, redis } = r.routes ?? {}
  if (memory !== undefined) ratios['me-memory'] = pairedRatio(okRates(memory.rounds['/me']!), okRates(memory.rounds['/plain']!))
  if (redis !== undefined) ratios['me-redis'] = pairedRatio(okRates(redis.rounds['/me']!), okRates(redis.rounds['/plain']!))
  const logout = r.logout?.memory
  if (logout !== undefined) {
    ratios.logout = pairedRatio(okRates(logout.rounds.plugin), okRates(logout.rounds.hand))
    if (logout.rounds.refresh !== undefined) ratios.refresh = pairedRatio(okRates(logout.rounds.refresh), okRates(logout.rounds.plugin))
  }
  if (r.example !== undefined) {
    ratios['example-me'] = pairedRatio(okRates(r.example.me), okRates(r.example.plain))
    ratios['example-me-bench'] = pairedRatio(okRates(r.example.me), okRates(r.example.benchMe))
    ratios['example-logout'] = pairedRatio(okRates(r.example.logout), okRates(r.example.handLogout))
    ratios['example-logout-bench'] = pairedRatio(okRates(r.example.logout), okRates(r.example.benchLogout))
    ratios['example-hand-logout'] = pairedRatio(okRates(r.example.exampleHandLogout), okRates(r.example.handLogout))
    ratios['example-logout-own-hand'] = pairedRatio(okRates(r.example.logout), okRates(r.example.exampleHandLogout))
  }
  if (r.loginMfa !== undefined) ratios['login-mfa'] = pairedRatio(r.loginMfa.map(({ loginMfa }) => loginMfa.okPerSecond), r.loginMfa.map(({ refresh }) => refresh.okPerSecond))
  if (r.passkey !== undefined) {
    const { rounds, verificationCpuMicros } = r.passkey
    ratios.passkey = pairedRatio(rounds.map((round) => round.signInsPerSecond), rounds.map(({ refresh }) => refresh.okPerSecond))
    // A sign-in's server CPU over what it should cost: the same round's Refresh plus one verification.
    if (rounds.every((round) => round.signInCpuMicros !== undefined && round.refresh.serverCpuMicrosPerResponse !== undefined)) {
      ratios['passkey-cpu'] = pairedRatio(rounds.map((round) => round.signInCpuMicros!), rounds.map(({ refresh }) => refresh.serverCpuMicrosPerResponse! + verificationCpuMicros.plugin))
    }
  }
  return ratios
}

/** The targets that are ratios (shown with ×). */
const RATIO_TARGETS = new Set<TargetId>(['scale-ceiling', 'scale-hand', 'login-defaults', 'login-tuned', 'login-hand', 'register', 'reauthenticate', 'me-memory', 'me-redis', 'logout', 'example-me', 'example-logout'])

export function checkTargets (r: BenchResults): Target[] {
  const targets: Target[] = []
  const paired = pairedRatios(r)
  const ratio = (id: TargetId, name: string, min: number): void => {
    const value = paired[id]?.median
    if (value !== undefined) targets.push({ id, name: `${name} (median of pairs)`, value, target: `≥ ${min.toFixed(2)}`, met: value >= min, min })
  }
  ratio('scale-ceiling', 'Login / argon2 ceiling at full parallelism (4 × cores connections)', 0.9)
  ratio('scale-hand', 'Login / hand-written login with a libuv thread per core, at full parallelism', 0.95)
  ratio('login-defaults', 'Login / argon2 ceiling (defaults)', 0.9)
  ratio('login-tuned', 'Login / argon2 ceiling (tuned)', 0.9)
  ratio('login-hand', 'Login / hand-written login (defaults)', 1)
  ratio('register', 'Register / argon2 ceiling (one hash each)', 0.9)
  ratio('reauthenticate', 'Reauthenticate / hand-written login', 1)
  ratio('me-memory', 'GET /me / GET /plain, memory stores', 1)
  ratio('me-redis', 'GET /me / GET /plain, sessions in Redis', 0.9)
  ratio('example-me', 'Example server (npm start) GET /me / the bench server\'s GET /plain', 1.5)
  ratio('example-logout', 'Example server (npm start) Logout / the bench server\'s /hand/logout', 0.9)
  const { postgres } = r.routes ?? {}
  if (postgres?.me.roundTrips !== undefined) {
    const statements = total(postgres.me.roundTrips.postgres)
    const commands = total(postgres.me.roundTrips.redis)
    targets.push({
      id: 'round-trips',
      name: 'GET /me, PostgreSQL accounts + Redis sessions: statements and Redis commands per request',
      value: Math.max(statements, commands),
      target: '≤ 1 each',
      met: statements <= ONE && commands <= ONE
    })
  }
  ratio('logout', 'Logout / hand-written logout, memory stores', 0.9)
  if (r.mixed !== undefined) {
    for (const profile of ['defaults', 'tuned'] as const) {
      const value = r.mixed[profile].loadedP99 / r.mixed[profile].unloadedP99
      targets.push({ id: `mixed-${profile}`, name: `GET /me p99 during a login flood / alone (${profile})`, value, target: '≤ 2', met: value <= 2 })
    }
  }
  if (r.lockout !== undefined) {
    const { rounds, ownerWithDevice, parallelGuesses } = r.lockout
    const met = ownerWithDevice.ok === rounds && parallelGuesses.verified <= 5
    targets.push({ id: 'lockout', name: 'Lockout attack: the owner\'s known device logs in every round; 200 parallel guesses with it get ≤ 5 verifications', value: ownerWithDevice.ok / rounds, target: 'every round, ≤ 5', met })
  }
  if (r.overload !== undefined) {
    const shed = r.overload.statuses['503'] ?? 0
    const met = shed > 0 && Object.keys(r.overload.statuses).every(status => LOGIN_STATUSES.has(status)) &&
      r.overload.errors === 0 && r.overload.timeouts === 0
    targets.push({ id: 'overload', name: 'Overload shed with 503 (only 200/401/429/503, no errors)', value: shed / r.overload.responses, target: '503s, no other 5xx', met })
  }
  // The highest of what the kernel kept (VmHWM), what was sampled from outside and what the server saw.
  const peak = (o: OverloadResult): number => Math.max(o.peakRss ?? 0, o.sampledPeakRss ?? 0, o.insidePeakRss ?? 0)
  if (r.overload?.peakRss !== undefined) {
    targets.push({ id: 'overload-rss', name: 'Overload: peak RSS of the bench server, from outside and inside', value: peak(r.overload), target: '≤ 200 MB', met: peak(r.overload) <= OVERLOAD_RSS_LIMIT })
  }
  if (r.overloadExample?.peakRss !== undefined) {
    const value = peak(r.overloadExample)
    targets.push({ id: 'overload-rss-example', name: 'Overload: peak RSS of the example server (npm start), from outside', value, target: '≤ 200 MB', met: value <= OVERLOAD_RSS_LIMIT })
  }
  if (r.enumeration !== undefined) {
    const value = r.enumeration.medianSpread
    targets.push({ id: 'enumeration', name: 'Enumeration: spread of the failure medians', value, target: '≤ 10 %', met: value <= 0.1 })
  }
  if (r.forgotEnumeration !== undefined) {
    const value = r.forgotEnumeration.medianSpread
    targets.push({ id: 'forgot-enumeration', name: 'ForgotPassword: spread of the medians', value, target: '≤ 10 %', met: value <= 0.1 })
  }
  if (r.registerEnumeration !== undefined) {
    const value = r.registerEnumeration.medianSpread
    targets.push({ id: 'register-enumeration', name: 'Register: spread of the medians', value, target: '≤ 10 %', met: value <= 0.1 })
  }
  if (r.changeEmailEnumeration !== undefined) {
    const { medianSpread, bytesByKind } = r.changeEmailEnumeration
    const sizes = new Set(Object.values(bytesByKind).flat())
    targets.push({ id: 'change-email-enumeration', name: 'ChangeEmail: spread of the medians; one answer size', value: medianSpread, target: '≤ 10 %, one size', met: medianSpread <= 0.1 && sizes.size === 1 })
  }
  if (r.registerFlood !== undefined) {
    const { alone, me, flood } = r.registerFlood
    const value = me.latency.p99 / (r.notFoundFlood?.me ?? alone).latency.p99
    const shed = (flood.statuses['503'] ?? 0) > 0 && Object.keys(flood.statuses).every((status) => status === '202' || status === '503')
    targets.push({ id: 'register-flood', name: 'Registration flood shed with 503; /me p99 during it', value, target: '503s; ≤ 1.5 × during a 404 flood', met: shed && value <= 1.5 })
  }
  if (r.forgotFlood !== undefined) {
    const value = r.forgotFlood.me.latency.p99 / (r.notFoundFlood?.me ?? r.forgotFlood.alone).latency.p99
    targets.push({ id: 'forgot-flood', name: '/me p99 during a ForgotPassword flood', value, target: '≤ 1.5 × during a 404 flood', met: value <= 1.5 })
  }
  if (r.breach !== undefined) {
    const { cost, hang } = r.breach
    targets.push({ id: 'breach-login', name: 'Login with the breached-password check (warm cache) / without: cost per login (median of pairs)', value: cost.median, target: '≤ 1.02', met: cost.median <= 1.02 })
    const worst = Math.max(...hang.latencies)
    const limit = breachHangLimit(hang)
    targets.push({
      id: 'breach-hang',
      name: 'Login while the range service hangs: every answer a 200 within the timeout plus the hash',
      value: worst,
      target: `≤ ${limit.toFixed(0)} ms`,
      met: worst <= limit && hang.statuses.every((status) => status === 200)
    })
  }
  return targets
}

/**
 * The longest a Login may take while the range service hangs: the lookup's timeout, then the hash and the rest
 * as the slowest of the lone logins took them, once for each login ahead of it in a batch on one core's
 * worth of threads, and a little for timers.
 */
export function breachHangLimit ({ timeoutMs, alone, concurrency }: BreachResult['hang']): number {
  return timeoutMs + alone.max * Math.ceil(concurrency / 2) + 50
}

const count = (n: number): string => Math.round(n).toLocaleString('en-US')
const rate = (n: number): string => n >= 1000 ? count(n) : n.toFixed(1)
const ms = (n: number | undefined): string => n === undefined || Number.isNaN(n) ? '–' : n >= 100 ? `${n.toFixed(0)} ms` : n >= 10 ? `${n.toFixed(1)} ms` : `${n.toFixed(2)} ms`
const times = (n: number): string => `${n.toFixed(2)} ×`
const mb = (bytes: number | undefined): string => bytes === undefined ? '–' : `${(bytes / 1e6).toFixed(0)} MB`
const mb1 = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`
const cpu = (r: LoadResult): string => r.serverCpuMicrosPerResponse === undefined ? '–' : `${r.serverCpuMicrosPerResponse.toFixed(0)} µs`
const verdict = (t: Target | undefined): string => t === undefined ? '' : t.met ? 'yes' : '**no**'

/** `fastify_password_auth_byId_1x2y3z` → `byId`. */
const statementName = (name: string): string => name.replace(/^fastify_password_auth_/, '').replace(/_[0-9a-z]+$/, '')

/** Store round trips per request: PostgreSQL statements and Redis commands by name, and what Redis itself counted. */
export function roundTripCell (r: LoadResult): string {
  const trips = r.roundTrips
  if (trips === undefined) return ''
  const parts: string[] = []
  const list = (counts: Record<string, number>, name: (s: string) => string = (s) => s): string =>
    Object.entries(counts).filter(([, n]) => n >= 0.005).map(([k, n]) => `${name(k)} ${n.toFixed(2)}`).join(', ')
  // Below 0.005: requests of the previous run still in flight when this one started.
  if (total(trips.postgres) >= 0.005) parts.push(`PostgreSQL ${total(trips.postgres).toFixed(2)} (${list(trips.postgres, statementName)})`)
  if (total(trips.redis) >= 0.005) {
    const seen = trips.redisServer === undefined ? '' : `; Redis counted ${total(trips.redisServer).toFixed(2)}`
    parts.push(`Redis ${total(trips.redis).toFixed(2)} (${list(trips.redis)}${seen})`)
  }
  return parts.length === 0 ? 'none' : parts.join(' + ')
}

/** Statuses other than `expected`, errors and timeouts: '0' when there are none. */
function unexpected (r: LoadResult, expected: string): string {
  const problems = Object.entries(r.statuses).filter(([status]) => status !== expected).map(([status, n]) => `${count(n)} × ${status}`)
  if (r.errors > 0) problems.push(`${r.errors} errors`)
  if (r.timeouts > 0) problems.push(`${r.timeouts} timeouts`)
  return problems.length === 0 ? '0' : problems.join(', ')
}

export function renderTable (r: BenchResults): string {
  const targets = r.targets ?? checkTargets(r)
  const target = (id: TargetId): Target | undefined => targets.find(t => t.id === id)
  const paired = pairedRatios(r)
  const pairs = (id: RatioId, baseline: string): string => paired[id] === undefined ? '' : pairedText(paired[id], baseline, target(id as TargetId)?.min)
  const rows: string[][] = []
  const row = (scenario: string, result: LoadResult | undefined, cells: { throughput?: string, ratio?: string, target?: TargetId, expected?: string, p50?: string, p99?: string } = {}): void => {
    const t = cells.target === undefined ? undefined : target(cells.target)
    rows.push([
      scenario,
      cells.throughput ?? (result === undefined ? '' : `${rate(result.perSecond)} /s`),
      cells.p50 ?? ms(result?.latency.p50),
      cells.p99 ?? ms(result?.latency.p99),
      cells.ratio ?? '',
      t === undefined ? '' : `${t.target}${RATIO_TARGETS.has(t.id) ? ' ×' : ''}`,
      verdict(t),
      result === undefined ? '' : cpu(result),
      result === undefined ? '' : roundTripCell(result),
      result === undefined ? '' : unexpected(result, cells.expected ?? '200')
    ])
  }
  const { defaults, tuned } = r.profiles

  if (r.scale !== undefined) {
    const { cores, connections, threads, ceiling } = r.scale
    const perSecond = ceiling.reduce((sum, run) => sum + run.verifications, 0) / ceiling.reduce((sum, run) => sum + run.durationMs / 1000, 0)
    rows.push([`Scale, ${cores} cores, ${connections} connections: argon2 ceiling, raw verify, ${connections} in flight on ${cores} libuv threads, no HTTP`,
      `${rate(perSecond)} /s (${ceiling.map(run => rate(run.perSecond)).join(', ')})`, '', '', '1.00 ×', '', '', '', '', ''])
    const scaleRow = (label: string, runs: ScaleResult['login'], ratio: string, id?: TargetId): void => {
      const all = pooled(runs)
      row(label, all, { throughput: `${rate(all.okPerSecond)} /s`, p50: ms(all.byStatus['200']?.p50), p99: ms(all.byStatus['200']?.p99), ratio, target: id })
    }
    scaleRow(`Scale: POST /hand/login, UV_THREADPOOL_SIZE=${threads.handFull}`, r.scale.handFull, pairs('scale-hand-ceiling', 'ceiling'))
    scaleRow(`Scale: POST /hand/login, libuv's default pool (${threads.handDefault} threads)`, r.scale.handDefault, pairs('scale-hand-default-ceiling', 'ceiling'))
    scaleRow(`Scale: POST /Auth/Login, plugin defaults (${threads.login} hashing threads), no UV_THREADPOOL_SIZE`, r.scale.login, pairs('scale-ceiling', 'ceiling'), 'scale-ceiling')
    rows.push([`Scale: Login / hand-written login, UV_THREADPOOL_SIZE=${threads.handFull}`, '', '', '', pairs('scale-hand', 'by hand'),
      target('scale-hand') === undefined ? '' : `${target('scale-hand')!.target} ×`, verdict(target('scale-hand')), '', '', ''])
    rows.push(['Scale: Login / hand-written login, libuv\'s default pool', '', '', '', pairs('scale-hand-default', 'by hand'), '', '', '', '', ''])
  }

  if (r.ceiling !== undefined && r.login !== undefined) {
    const limit = r.ceiling
    rows.push([`argon2 ceiling: raw verify, ${defaults.hashThreads} at once, UV_THREADPOOL_SIZE=${defaults.threadPoolSize}, no HTTP`,
      `${rate(limit.perSecond)} /s (${limit.runs.map(run => rate(run.perSecond)).join(', ')})`, '', '', '1.00 ×', '', '', '', '', ''])
    const hand = r.login.hand
    row(`POST /hand/login: written by hand (lookup, argon2 verify, jwt.sign), ${defaults.description}`, hand, {
      throughput: `${rate(hand.okPerSecond)} /s`,
      p50: ms(hand.byStatus['200']?.p50),
      p99: ms(hand.byStatus['200']?.p99),
      ratio: pairedText(pairedRatio(okRates(hand.rounds), limit.runs.map((run) => run.perSecond)), 'ceiling')
    })
    for (const profile of [defaults, tuned]) {
      const login = r.login[profile.name]
      const ok = login.byStatus['200']
      row(`POST /Auth/Login, ${profile.name} (${profile.description})`, login, {
        throughput: `${rate(login.okPerSecond)} /s`,
        p50: ms(ok?.p50),
        p99: ms(ok?.p99),
        ratio: pairs(`login-${profile.name}`, 'ceiling'),
        target: `login-${profile.name}`
      })
    }
    rows.push(['Plugin Login / hand-written login', '', '', '', pairs('login-hand', 'by hand'), target('login-hand') === undefined ? '' : `${target('login-hand')!.target} ×`, verdict(target('login-hand')), '', '', ''])
    rows.push(['Plugin Login (tuned) / hand-written login', '', '', '', pairs('login-tuned-hand', 'by hand'), '', '', '', '', ''])
    const { register, reauthenticate } = r.login
    if (register !== undefined) {
      row('POST /Auth/Register: new and pending addresses, one argon2id hash each', register, {
        throughput: `${rate(register.okPerSecond)} /s`, ratio: pairs('register', 'ceiling'), target: 'register', expected: '202'
      })
    }
    if (reauthenticate !== undefined) {
      row('POST /Auth/Reauthenticate: the guard, then Login\'s password check', reauthenticate, {
        throughput: `${rate(reauthenticate.okPerSecond)} /s`, ratio: pairs('reauthenticate', 'hand-written login'), target: 'reauthenticate', expected: '204'
      })
    }
  }
  const routeRows = (set: RouteSet | undefined, id: TargetId | undefined, label: string): void => {
    if (set === undefined) return
    row(`GET /open: no auth (${label})`, set.open)
    row(`GET /plain: \`request.jwtVerify()\` + revoked-jti Set, by hand (${label})`, set.plain, { ratio: `${times(set.plain.okPerSecond / set.open.okPerSecond)} /open` })
    row(`GET /me: \`authenticate\`, ${set.stores}`, set.me, {
      ratio: id === 'me-memory' || id === 'me-redis' ? pairs(id, '/plain') : `${times(set.me.okPerSecond / set.plain.okPerSecond)} /plain`, target: id
    })
  }
  routeRows(r.routes?.memory, 'me-memory', 'memory server')
  routeRows(r.routes?.redis, 'me-redis', 'Redis server')
  routeRows(r.routes?.postgres, 'round-trips', 'PostgreSQL + Redis server')
  if (r.statements !== undefined) {
    row('GET /me, PostgreSQL accounts with named statements (the default) + Redis sessions', r.statements.named)
    row('GET /me, the same with `preparedStatements: false` (unnamed: what a transaction pooler needs)', r.statements.unnamed, {
      ratio: pairedText(r.statements.ratio, 'named')
    })
  }
  if (r.sql !== undefined) {
    const labels = { login: 'POST /Auth/Login', me: 'GET /me', refresh: 'POST /Auth/Refresh' } as const
    for (const route of ['login', 'me', 'refresh'] as const) {
      for (const dialect of r.sql.dialects) {
        const runs = r.sql.rounds[route][dialect]!
        const middle = [...runs].sort((a, b) => a.okPerSecond - b.okPerSecond)[Math.floor(runs.length / 2)]!
        const ratio = r.sql.ratios[route][dialect]
        row(`${labels[route]}, ${r.sql.descriptions[dialect] ?? dialect}`, middle, {
          throughput: `${rate(middle.okPerSecond)} /s`, ratio: ratio === undefined ? '' : pairedText(ratio, 'PostgreSQL')
        })
      }
    }
  }
  if (r.mixed !== undefined) {
    for (const profile of [defaults, tuned]) {
      const { unloaded, loaded, flood, unloadedP99, loadedP99 } = r.mixed[profile.name]
      const t = target(`mixed-${profile.name}`)
      row(`GET /me at ${r.settings.mixedRate} req/s alone, ${profile.name}`, unloaded, { p99: `${ms(unloadedP99)}*` })
      row(`GET /me at ${r.settings.mixedRate} req/s during a login flood (${rate(flood.okPerSecond)} logins/s), ${profile.name}`, loaded, {
        p99: `${ms(loadedP99)}*`, ratio: `${times(t?.value ?? NaN)} p99 alone`, target: `mixed-${profile.name}`
      })
    }
  }
  if (r.example !== undefined) {
    const median = (runs: LoadResult[]): LoadResult => [...runs].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(runs.length / 2)]!
    row('Example server (`npm start`, every feature on, its logger at LOG_LEVEL=warn, memory stores): GET /me', median(r.example.me), {
      ratio: `${pairs('example-me', '/plain')}; ${pairs('example-me-bench', 'the bench server\'s /me')}`, target: 'example-me'
    })
    row('Example server: POST /Auth/Logout', median(r.example.logout), {
      expected: '204',
      ratio: `${pairs('example-logout', '/hand/logout')}; ${pairs('example-logout-bench', 'the bench server\'s Logout')}; ` +
        pairs('example-logout-own-hand', 'the same /hand/logout in its own process'),
      target: 'example-logout'
    })
    row('Example server: POST /hand/logout, the bench server\'s hand-written route in its process (what its set-up costs a request)', median(r.example.exampleHandLogout), {
      expected: '204', ratio: pairs('example-hand-logout', 'the same route in the bench server')
    })
  }
  for (const pair of [r.logout?.memory, r.logout?.redis]) {
    if (pair === undefined) continue
    const memory = pair === r.logout?.memory
    row(`POST /hand/logout: \`request.jwtVerify()\` + jti into a Set, by hand (${memory ? 'memory' : 'Redis'} server)`, pair.hand, { expected: '204' })
    const logoutRatio = memory ? pairs('logout', 'by hand') : pairedText(pairedRatio(okRates(pair.rounds.plugin), okRates(pair.rounds.hand)), 'by hand')
    row(`POST /Auth/Logout, ${pair.stores}`, pair.plugin, { expected: '204', ratio: logoutRatio, target: memory ? 'logout' : undefined })
    if (pair.refresh !== undefined && pair.rounds.refresh !== undefined) {
      const refreshRatio = memory ? pairs('refresh', 'Logout') : pairedText(pairedRatio(okRates(pair.rounds.refresh), okRates(pair.rounds.plugin)), 'Logout')
      row(`POST /Auth/Refresh, one session per connection, ${pair.stores}`, pair.refresh, { ratio: refreshRatio })
    }
  }
  if (r.loginMfa !== undefined) {
    const ratios = paired['login-mfa']!.ratios
    const middle = r.loginMfa[ratios.indexOf([...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!)]!
    row(`POST /Auth/Refresh, ${middle.refresh.responses} sessions just started by LoginMfa, memory stores (the median pair)`, middle.refresh)
    row(`POST /Auth/LoginMfa with recovery codes, ${middle.loginMfa.responses} challenges, memory stores (the median pair)`, middle.loginMfa, {
      ratio: pairs('login-mfa', 'Refresh')
    })
  }
  if (r.passkey !== undefined) {
    const { rounds, passkeys, verificationCpuMicros } = r.passkey
    const ratios = paired.passkey!.ratios
    const middle = rounds[ratios.indexOf([...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!)]!
    row(`POST /Auth/Refresh, ${middle.refresh.responses} sessions just started by LoginPasskey, memory stores (the median pair)`, middle.refresh)
    row(`POST /Auth/Passkeys/LoginOptions, ${middle.options.responses} challenges (the median pair's)`, middle.options)
    row(`POST /Auth/LoginPasskey, ${middle.loginPasskey.responses} assertions signed beforehand, ${passkeys} passkeys (the median pair's)`, middle.loginPasskey)
    const cpuOf = (micros: number | undefined): string => micros === undefined ? '–' : `${micros.toFixed(0)} µs`
    const expected = middle.refresh.serverCpuMicrosPerResponse === undefined ? undefined : middle.refresh.serverCpuMicrosPerResponse + verificationCpuMicros.plugin
    rows.push(['Passkey sign-in: LoginOptions + LoginPasskey; server CPU against Refresh\'s plus one ES256 verification as the plugin makes it ' +
      `(${cpuOf(verificationCpuMicros.plugin)} in the bench's process; raw \`crypto.verify\` ${cpuOf(verificationCpuMicros.raw)})`,
    `${rate(middle.signInsPerSecond)} sign-ins/s`, '', '', pairs('passkey', 'Refresh'),
    `CPU ≈ Refresh + one verification (${cpuOf(expected)}): ${pairs('passkey-cpu', 'that')}`, '', cpuOf(middle.signInCpuMicros), '',
    unexpected(middle.loginPasskey, '200') === '0' && unexpected(middle.options, '200') === '0' ? '0' : `${unexpected(middle.options, '200')}; ${unexpected(middle.loginPasskey, '200')}`])
  }
  if (r.floodProbe !== undefined) {
    const { connections, me, flood } = r.floodProbe
    row(`GET /me at ${r.settings.mixedRate} req/s during a ${connections}-connection login flood (${rate(flood.okPerSecond)} logins/s, ` +
      `${((flood.statuses['503'] ?? 0) / Math.max(1, flood.responses) * 100).toFixed(0)} % shed)`, me)
  }
  if (r.overload !== undefined) {
    const o = r.overload
    const t = target('overload')
    const statuses = Object.entries(o.statuses).map(([status, n]) => `${count(n)} × ${status}`).join(', ')
    const problems = [o.errors > 0 ? `${o.errors} errors` : '', o.timeouts > 0 ? `${o.timeouts} timeouts` : ''].filter(Boolean).join(', ')
    rows.push([`Overload: ${o.connections} concurrent logins, ${defaults.name}`,
      `${rate(o.okPerSecond)} 200/s; ${statuses}`, ms(o.byStatus['200']?.p50), ms(o.byStatus['200']?.p99),
      `${((t?.value ?? NaN) * 100).toFixed(1)} % shed`, '503, no other 5xx', verdict(t), cpu(o), '', problems === '' ? '0' : problems])
    const rss = target('overload-rss')
    if (rss !== undefined) {
      rows.push(['Overload: peak RSS of the bench server: VmHWM / VmRSS every 100 ms / as the server saw it', `${mb(o.peakRss)} / ${mb(o.sampledPeakRss)} / ${mb(o.insidePeakRss)}`,
        '', '', `${mb(o.idleRss)} before`, '≤ 200 MB', verdict(rss), '', '', ''])
    }
    const example = r.overloadExample
    const exampleRss = target('overload-rss-example')
    if (example !== undefined && exampleRss !== undefined) {
      const statuses = Object.entries(example.statuses).map(([status, n]) => `${count(n)} × ${status}`).join(', ')
      rows.push([`Overload: the example server (npm start, 2 registrations, API docs), ${statuses}: VmHWM / VmRSS every 100 ms`,
        `${mb(example.peakRss)} / ${mb(example.sampledPeakRss)}`, '', '', `${mb(example.idleRss)} before`, '≤ 200 MB', verdict(exampleRss), cpu(example), '', ''])
    }
  }
  if (r.enumeration !== undefined) {
    const { byKind, statuses } = r.enumeration
    const t = target('enumeration')
    const others = Object.entries(statuses).filter(([status]) => status !== '401').map(([status, n]) => `${n} × ${status}`).join(', ')
    rows.push([`Login failures, medians: unknown e-mail / wrong password / inactive account (${byKind.unknownEmail!.count + byKind.wrongPassword!.count + byKind.inactiveAccount!.count} interleaved)`,
      '', `${ms(byKind.unknownEmail!.p50)} / ${ms(byKind.wrongPassword!.p50)} / ${ms(byKind.inactiveAccount!.p50)}`, '',
      `${((t?.value ?? NaN) * 100).toFixed(1)} % spread`, '≤ 10 %', verdict(t), '', '', others === '' ? '0' : others])
  }
  if (r.forgotEnumeration !== undefined) {
    const { byKind, statuses } = r.forgotEnumeration
    const t = target('forgot-enumeration')
    const others = Object.entries(statuses).filter(([status]) => status !== '202').map(([status, n]) => `${n} × ${status}`).join(', ')
    rows.push([`ForgotPassword, medians: unknown e-mail / active account / inactive account (${byKind.unknownEmail!.count + byKind.activeAccount!.count + byKind.inactiveAccount!.count} interleaved)`,
      '', `${ms(byKind.unknownEmail!.p50)} / ${ms(byKind.activeAccount!.p50)} / ${ms(byKind.inactiveAccount!.p50)}`, '',
      `${((t?.value ?? NaN) * 100).toFixed(1)} % spread`, '≤ 10 %', verdict(t), '', '', others === '' ? '0' : others])
  }
  if (r.registerEnumeration !== undefined) {
    const { byKind, statuses } = r.registerEnumeration
    const t = target('register-enumeration')
    const kinds = ['unknownEmail', 'pendingAddress', 'activeAccount', 'inactiveAccount'] as const
    const others = Object.entries(statuses).filter(([status]) => status !== '202').map(([status, n]) => `${n} × ${status}`).join(', ')
    rows.push([`Register, medians: new / pending / taken / inactive address (${kinds.reduce((sum, kind) => sum + byKind[kind]!.count, 0)} interleaved)`,
      '', kinds.map((kind) => ms(byKind[kind]!.p50)).join(' / '), '',
      `${((t?.value ?? NaN) * 100).toFixed(1)} % spread`, '≤ 10 %', verdict(t), '', '', others === '' ? '0' : others])
  }
  if (r.changeEmailEnumeration !== undefined) {
    const { byKind, bytesByKind, statuses } = r.changeEmailEnumeration
    const t = target('change-email-enumeration')
    const kinds = ['unknownEmail', 'pendingAddress', 'activeAccount', 'ownAddress'] as const
    const others = Object.entries(statuses).filter(([status]) => status !== '202').map(([status, n]) => `${n} × ${status}`).join(', ')
    rows.push([`ChangeEmail, medians: free / pending / taken / own address (${kinds.reduce((sum, kind) => sum + byKind[kind]!.count, 0)} interleaved); ` +
      `answer bytes (headers + body): ${kinds.map((kind) => bytesByKind[kind]!.join(' or ')).join(' / ')}`,
    '', kinds.map((kind) => ms(byKind[kind]!.p50)).join(' / '), '',
    `${((t?.value ?? NaN) * 100).toFixed(1)} % spread`, '≤ 10 %, one size', verdict(t), '', '', others === '' ? '0' : others])
  }
  if (r.registerFlood !== undefined) {
    const { connections, alone, me, flood } = r.registerFlood
    const t = target('register-flood')
    const statuses = Object.entries(flood.statuses).map(([status, n]) => `${count(n)} × ${status}`).join(', ')
    rows.push([`GET /me alone / during a 404 flood / during a ${connections}-connection registration flood (${statuses})`, '',
      '', `${ms(alone.latency.p99)} / ${ms(r.notFoundFlood?.me.latency.p99)} / ${ms(me.latency.p99)}`, `${(t?.value ?? NaN).toFixed(2)} ×`, '503s; ≤ 1.5 × the 404 flood', verdict(t), '', '', ''])
  }
  if (r.forgotFlood !== undefined) {
    const { connections, alone, me, flood } = r.forgotFlood
    const t = target('forgot-flood')
    const baseline = r.notFoundFlood
    rows.push([`GET /me at ${r.settings.mixedRate} req/s alone / during a 404 flood (${baseline === undefined ? '–' : rate(baseline.flood.perSecond)} req/s) / during a ${connections}-connection ForgotPassword flood (${rate(flood.perSecond)} req/s)`, '',
      '', `${ms(alone.latency.p99)} / ${ms(baseline?.me.latency.p99)} / ${ms(me.latency.p99)}`, `${(t?.value ?? NaN).toFixed(2)} ×`, '≤ 1.5 × the 404 flood', verdict(t), '', '', ''])
  }

  if (r.breach !== undefined) {
    const { rounds, hang } = r.breach
    const middle = rounds.checked[Math.floor(rounds.checked.length / 2)]
    row('POST /Auth/Login with the breached-password check, warm cache (one prefix), memory stores', middle, {
      throughput: `${rounds.checked.map((run) => rate(run.okPerSecond)).join(', ')} /s`,
      ratio: `cost ${pairedText(r.breach.cost, 'without the check')}`,
      target: 'breach-login'
    })
    const sorted = [...hang.latencies].sort((a, b) => a - b)
    const t = target('breach-hang')
    rows.push([`POST /Auth/Login while the range service hangs (timeout ${hang.timeoutMs} ms, nothing cached, ${hang.concurrency} at once); alone it takes ${ms(hang.alone.median)} (at most ${ms(hang.alone.max)})`,
      '', ms(sorted[sorted.length >> 1]), ms(sorted.at(-1)), '', t?.target ?? '', verdict(t), '', '',
      hang.statuses.filter((status) => status !== 200).length === 0 ? '0' : hang.statuses.filter((status) => status !== 200).join(', ')])
  }
  if (r.lockout !== undefined) {
    const l = r.lockout
    const t = target('lockout')
    rows.push([`Lockout attack, ${l.rounds} rounds of 1-s blocks: the owner's right password without / with a device token`,
      '', '', '', `${l.ownerWithoutDevice.ok} / ${l.ownerWithDevice.ok} of ${l.rounds} logged in`, 'with: every round', verdict(t), '', '', `stranger verified ${l.strangerVerified}`])
    rows.push(['Lockout attack: 200 parallel wrong guesses with one device token', '', '', '',
      `${l.parallelGuesses.verified} verified, ${l.parallelGuesses.throttled} × 429`, '≤ 5 verified', verdict(t), '', '', ''])
  }
  if (r.startup !== undefined) {
    const of = (common: boolean, field: 'ms' | 'rss' | 'heapUsed'): number => {
      const values = r.startup!.filter((run) => run.common === common).map((run) => run[field]).sort((a, b) => a - b)
      return values[Math.floor(values.length / 2)]!
    }
    rows.push([`Start-up (register + ready, fresh process, ${r.startup.length / 2} each): common-password list on / off`, '',
      `${ms(of(true, 'ms'))} / ${ms(of(false, 'ms'))}`, '', `RSS ${mb1(of(true, 'rss'))} / ${mb1(of(false, 'rss'))}; heap ${mb1(of(true, 'heapUsed'))} / ${mb1(of(false, 'heapUsed'))}`,
      '—', '', '', '', ''])
  }

  const header = ['Scenario', 'Throughput', 'p50', 'p99', 'Ratio', 'Target', 'Met', 'Server CPU / response', 'Store round trips / request', 'Unexpected']
  const m = r.machine
  const s = r.settings
  const lines = [
    `${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node} (${m.platform}); argon2id m=${s.argon2.memoryCost}, t=${s.argon2.timeCost}, ` +
      `p=${s.argon2.parallelism}; ${s.accounts} accounts; ${s.secondsPerRun} s per run; ${r.date}` +
      (r.backgroundCpu === undefined ? '' : `; CPU busy with other processes while the bench idled: ${r.backgroundCpu.map(b => `${(b * 100).toFixed(0)} %`).join(', ')}`) +
      (r.stealShare === undefined ? '' : `; steal: ${(r.stealShare * 100).toFixed(1)} %`),
    '',
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map(cells => `| ${cells.join(' | ')} |`),
    '',
    ...(r.mixed === undefined ? [] : [`p99 values marked * are the median of ${r.mixed.defaults.rounds.unloadedP99.length} runs' p99s (the pooled ones are in the JSON).`, '']),
    `Targets met: ${targets.filter(t => t.met).length} of ${targets.length}` +
      (targets.some(t => !t.met) ? ` (missed: ${targets.filter(t => !t.met).map(t => t.name).join('; ')})` : '') + '.',
    ''
  ]
  if (r.scale !== undefined) {
    const { cores, threads } = r.scale
    for (const [name, runs, hashing] of [['Login', r.scale.login, `of ${threads.login} hashing threads`], [`by hand, UV_THREADPOOL_SIZE=${threads.handFull}`, r.scale.handFull, `of ${threads.handFull} libuv threads`],
      ['by hand, libuv\'s default pool', r.scale.handDefault, `of ${threads.handDefault} libuv threads`]] as const) {
      const all = pooled(runs)
      const perLogin = (micros: number | undefined): string => micros === undefined ? '–' : `${(micros / 1000).toFixed(2)} ms`
      lines.push(`- Scale, ${name}: ${all.hashesRunning === undefined ? '–' : all.hashesRunning.toFixed(1)} ${hashing} busy on average; per login, server CPU ` +
        `${perLogin(all.serverCpuMicrosPerResponse)} (event loop ${perLogin(all.eventLoopCpuMicrosPerResponse)}), load generator ${perLogin(all.loadGeneratorCpuMicrosPerResponse)}` +
        (all.machineIdleShare === undefined ? '' : `; ${(all.machineIdleShare * 100).toFixed(1)} % of the ${cores} cores left idle`) + '.')
    }
  }
  for (const [name, login] of [['defaults', r.login?.defaults], ['tuned', r.login?.tuned], ['hand-written', r.login?.hand]] as const) {
    if (login?.eventLoopCpuMicrosPerResponse === undefined || login.loadGeneratorCpuMicrosPerResponse === undefined) continue
    const share = (login.eventLoopCpuMicrosPerResponse + login.loadGeneratorCpuMicrosPerResponse) * login.okPerSecond / 1e6 / m.cpus
    lines.push(`- Login (${name}), per request: server event loop ${(login.eventLoopCpuMicrosPerResponse / 1000).toFixed(2)} ms CPU, load generator ` +
      `${(login.loadGeneratorCpuMicrosPerResponse / 1000).toFixed(2)} ms: ${(share * 100).toFixed(1)} % of the ${m.cpus} cores at ${rate(login.okPerSecond)} logins/s` +
      (login.machineIdleShare === undefined ? '.' : `; CPU left idle: ${(login.machineIdleShare * 100).toFixed(1)} %.`))
  }
  if (r.notes.length > 0) lines.push('')
  for (const note of r.notes) lines.push(`- Note: ${note}`)
  return lines.join('\n')
}
