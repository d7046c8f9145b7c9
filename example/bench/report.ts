/** The bench's result document, the issue's targets checked against it, and its markdown table. */
import type { CeilingResult } from './ceiling.js'
import type { EnumerationResult } from './enumeration.js'
import type { LoadResult } from './load.js'
import type { MixedResult } from './scenarios.js'
import type { Profile } from './settings.js'

export interface CeilingSummary {
  runs: CeilingResult[]
  /** All rounds' verifications over all rounds' time. */
  perSecond: number
}

type Rounds = LoadResult & { rounds: LoadResult[] }

export interface BenchResults {
  runId: string
  date: string
  machine: { cpus: number, cpuModel: string, memoryGiB: number, node: string, platform: string }
  settings: Record<string, unknown> & { argon2: { memoryCost: number, timeCost: number, parallelism: number }, mixedRate: number, accounts: number }
  profiles: Record<Profile['name'], Profile>
  notes: string[]
  ceiling?: CeilingSummary
  login?: { defaults: Rounds, tuned: Rounds, hand: Rounds }
  routes?: { open: LoadResult, plain: LoadResult, me: LoadResult, rounds: Record<string, LoadResult[]> }
  mixed?: Record<Profile['name'], MixedResult>
  logout?: { memory: LoadResult, redis?: LoadResult }
  enumeration?: EnumerationResult
  redis?: { plain: LoadResult, me: LoadResult, rounds: Record<string, LoadResult[]> }
  overload?: LoadResult & { idleRss?: number, peakRss?: number, serverCpuMs?: number, stats: unknown }
  serverStats?: unknown
  /** Share of all CPUs busy with other processes, sampled while the bench was idle. */
  backgroundCpu?: number[]
  /** Share of the machine's CPU time the hypervisor gave to others during the run. */
  stealShare?: number
  targets?: Target[]
  totalSeconds?: number
}

export interface Target {
  id: 'login-defaults' | 'login-tuned' | 'me' | 'mixed-defaults' | 'mixed-tuned' | 'overload' | 'enumeration'
  name: string
  value: number
  target: string
  met: boolean
}

const LOGIN_STATUSES = new Set(['200', '401', '429', '503'])

/** The issue's targets, from the measured numbers. */
export function checkTargets (r: BenchResults): Target[] {
  const targets: Target[] = []
  if (r.ceiling !== undefined && r.login !== undefined) {
    for (const profile of ['defaults', 'tuned'] as const) {
      const value = r.login[profile].okPerSecond / r.ceiling.perSecond
      targets.push({ id: `login-${profile}`, name: `Login / argon2 ceiling (${profile})`, value, target: '≥ 0.95', met: value >= 0.95 })
    }
  }
  if (r.routes !== undefined) {
    const value = r.routes.me.okPerSecond / r.routes.plain.okPerSecond
    targets.push({ id: 'me', name: 'GET /me (authenticate) / GET /plain (jwtVerify)', value, target: '≥ 0.90', met: value >= 0.9 })
  }
  if (r.mixed !== undefined) {
    for (const profile of ['defaults', 'tuned'] as const) {
      const value = r.mixed[profile].loadedP99 / r.mixed[profile].unloadedP99
      targets.push({ id: `mixed-${profile}`, name: `GET /me p99 during a login flood / alone (${profile})`, value, target: '≤ 2', met: value <= 2 })
    }
  }
  if (r.overload !== undefined) {
    const shed = r.overload.statuses['503'] ?? 0
    const met = shed > 0 && Object.keys(r.overload.statuses).every(status => LOGIN_STATUSES.has(status)) &&
      r.overload.errors === 0 && r.overload.timeouts === 0
    targets.push({ id: 'overload', name: 'Overload shed with 503 (only 200/401/429/503, no errors)', value: shed / r.overload.responses, target: '503s, no other 5xx', met })
  }
  if (r.enumeration !== undefined) {
    const value = r.enumeration.medianSpread
    targets.push({ id: 'enumeration', name: 'Enumeration: spread of the failure medians', value, target: '≤ 10 %', met: value <= 0.1 })
  }
  return targets
}

const count = (n: number): string => Math.round(n).toLocaleString('en-US')
const rate = (n: number): string => n >= 1000 ? count(n) : n.toFixed(1)
const ms = (n: number | undefined): string => n === undefined || Number.isNaN(n) ? '–' : n >= 100 ? `${n.toFixed(0)} ms` : n >= 10 ? `${n.toFixed(1)} ms` : `${n.toFixed(2)} ms`
const times = (n: number): string => `${n.toFixed(2)} ×`
const mib = (bytes: number | undefined): string => bytes === undefined ? '–' : `${(bytes / 2 ** 20).toFixed(0)} MiB`
const cpu = (r: LoadResult): string => r.serverCpuMicrosPerResponse === undefined ? '–' : `${r.serverCpuMicrosPerResponse.toFixed(0)} µs`
const verdict = (t: Target | undefined): string => t === undefined ? '' : t.met ? 'yes' : '**no**'

/** Statuses other than `expected`, errors and timeouts: '0' when there are none. */
function unexpected (r: LoadResult, expected: string): string {
  const problems = Object.entries(r.statuses).filter(([status]) => status !== expected).map(([status, n]) => `${count(n)} × ${status}`)
  if (r.errors > 0) problems.push(`${r.errors} errors`)
  if (r.timeouts > 0) problems.push(`${r.timeouts} timeouts`)
  return problems.length === 0 ? '0' : problems.join(', ')
}

export function renderTable (r: BenchResults): string {
  const targets = r.targets ?? checkTargets(r)
  const target = (id: Target['id']): Target | undefined => targets.find(t => t.id === id)
  const rows: string[][] = []
  const row = (...cells: string[]): void => { rows.push(cells) }
  const { defaults, tuned } = r.profiles

  if (r.ceiling !== undefined && r.login !== undefined) {
    const limit = r.ceiling
    row(`argon2 ceiling: raw verify, ${defaults.hashConcurrency} at once, UV_THREADPOOL_SIZE=${defaults.threadPoolSize}, no HTTP`,
      `${rate(limit.perSecond)} /s (${limit.runs.map(run => rate(run.perSecond)).join(', ')})`, '', '', '1.00 ×', '', '', '', '')
    for (const profile of [defaults, tuned]) {
      const login = r.login[profile.name]
      const ok = login.byStatus['200']
      const t = target(`login-${profile.name}`)
      row(`POST /Auth/Login, ${profile.name} (${profile.description})`, `${rate(login.okPerSecond)} /s`, ms(ok?.p50), ms(ok?.p99),
        `${times(t?.value ?? NaN)} ceiling`, '≥ 0.95 ×', verdict(t), cpu(login), unexpected(login, '200'))
    }
    const hand = r.login.hand
    row(`POST /hand/login: written by hand (lookup, argon2 verify, jwt.sign), ${defaults.description}`, `${rate(hand.okPerSecond)} /s`,
      ms(hand.byStatus['200']?.p50), ms(hand.byStatus['200']?.p99), `${times(hand.okPerSecond / limit.perSecond)} ceiling`, '', '', cpu(hand), unexpected(hand, '200'))
    row('Plugin Login / hand-written login', '', '', '',
      `${times(r.login.defaults.okPerSecond / hand.okPerSecond)} defaults, ${times(r.login.tuned.okPerSecond / hand.okPerSecond)} tuned`, '', '', '', '')
  }
  if (r.routes !== undefined) {
    const { open, plain, me } = r.routes
    row('GET /open: no auth', `${rate(open.perSecond)} /s`, ms(open.latency.p50), ms(open.latency.p99), '', '', '', cpu(open), unexpected(open, '200'))
    row('GET /plain: `await request.jwtVerify()` only', `${rate(plain.perSecond)} /s`, ms(plain.latency.p50), ms(plain.latency.p99),
      `${times(plain.okPerSecond / open.okPerSecond)} /open`, '', '', cpu(plain), unexpected(plain, '200'))
    const t = target('me')
    row('GET /me: `authenticate`, memory stores', `${rate(me.perSecond)} /s`, ms(me.latency.p50), ms(me.latency.p99),
      `${times(t?.value ?? NaN)} /plain`, '≥ 0.90 ×', verdict(t), cpu(me), unexpected(me, '200'))
  }
  if (r.redis !== undefined) {
    const { plain, me } = r.redis
    row('GET /plain, on the Redis server', `${rate(plain.perSecond)} /s`, ms(plain.latency.p50), ms(plain.latency.p99), '', '', '', cpu(plain), unexpected(plain, '200'))
    row('GET /me: `authenticate`, revocations in Redis', `${rate(me.perSecond)} /s`, ms(me.latency.p50), ms(me.latency.p99),
      `${times(me.okPerSecond / plain.okPerSecond)} /plain`, '', '', cpu(me), unexpected(me, '200'))
  }
  if (r.mixed !== undefined) {
    for (const profile of [defaults, tuned]) {
      const { unloaded, loaded, flood, unloadedP99, loadedP99 } = r.mixed[profile.name]
      const t = target(`mixed-${profile.name}`)
      row(`GET /me at ${r.settings.mixedRate} req/s alone, ${profile.name}`, `${rate(unloaded.perSecond)} /s`, ms(unloaded.latency.p50), `${ms(unloadedP99)}*`, '', '', '', '', unexpected(unloaded, '200'))
      row(`GET /me at ${r.settings.mixedRate} req/s during a login flood (${rate(flood.okPerSecond)} logins/s), ${profile.name}`, `${rate(loaded.perSecond)} /s`,
        ms(loaded.latency.p50), `${ms(loadedP99)}*`, `${times(t?.value ?? NaN)} p99 alone`, '≤ 2 ×', verdict(t), '', unexpected(loaded, '200'))
    }
  }
  if (r.logout !== undefined) {
    const { memory, redis } = r.logout
    row('POST /Auth/Logout, memory stores', `${rate(memory.perSecond)} /s`, ms(memory.latency.p50), ms(memory.latency.p99), '', '', '', cpu(memory), unexpected(memory, '204'))
    if (redis !== undefined) {
      row('POST /Auth/Logout, revocations in Redis', `${rate(redis.perSecond)} /s`, ms(redis.latency.p50), ms(redis.latency.p99), '', '', '', cpu(redis), unexpected(redis, '204'))
    }
  }
  if (r.overload !== undefined) {
    const o = r.overload
    const t = target('overload')
    const statuses = Object.entries(o.statuses).map(([status, n]) => `${count(n)} × ${status}`).join(', ')
    const problems = [o.errors > 0 ? `${o.errors} errors` : '', o.timeouts > 0 ? `${o.timeouts} timeouts` : ''].filter(Boolean).join(', ')
    row(`Overload: ${o.connections} concurrent logins, ${defaults.name} (peak RSS ${mib(o.peakRss)}, ${mib(o.idleRss)} before)`,
      `${rate(o.okPerSecond)} 200/s; ${statuses}`, ms(o.byStatus['200']?.p50), ms(o.byStatus['200']?.p99),
      `${((t?.value ?? NaN) * 100).toFixed(1)} % shed`, '503, no other 5xx', verdict(t), cpu(o), problems === '' ? '0' : problems)
  }
  if (r.enumeration !== undefined) {
    const { byKind, statuses } = r.enumeration
    const t = target('enumeration')
    const others = Object.entries(statuses).filter(([status]) => status !== '401').map(([status, n]) => `${n} × ${status}`).join(', ')
    row(`Login failures, medians: unknown e-mail / wrong password / inactive account (${byKind.unknownEmail.count + byKind.wrongPassword.count + byKind.inactiveAccount.count} interleaved)`,
      '', `${ms(byKind.unknownEmail.p50)} / ${ms(byKind.wrongPassword.p50)} / ${ms(byKind.inactiveAccount.p50)}`, '',
      `${((t?.value ?? NaN) * 100).toFixed(1)} % spread`, '≤ 10 %', verdict(t), '', others === '' ? '0' : others)
  }

  const header = ['Scenario', 'Throughput', 'p50', 'p99', 'Ratio', 'Target', 'Met', 'Server CPU / response', 'Unexpected']
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
