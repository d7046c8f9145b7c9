/** The bench's result document and its markdown table, with the issue's targets checked. */
import type { CeilingResult } from './ceiling.js'
import type { EnumerationResult } from './enumeration.js'
import type { LoadResult } from './load.js'

export interface BenchResults {
  runId: string
  date: string
  machine: { cpus: number, cpuModel: string, memoryGiB: number, node: string, platform: string }
  settings: Record<string, unknown>
  notes: string[]
  ceiling?: { runs: CeilingResult[], perSecond: number }
  login?: LoadResult & { rounds: LoadResult[] }
  handLogin?: LoadResult & { rounds: LoadResult[] }
  routes?: { open: LoadResult, plain: LoadResult, me: LoadResult, rounds: Record<string, LoadResult[]> }
  mixed?: { unloaded: LoadResult, loaded: LoadResult, flood: LoadResult }
  logout?: { memory: LoadResult, redis?: LoadResult }
  enumeration?: EnumerationResult
  redis?: { plain: LoadResult, me: LoadResult, rounds: Record<string, LoadResult[]> }
  overload?: LoadResult & { idleRss?: number, peakRss?: number, serverCpuMs?: number, stats: unknown }
  memoryServer?: unknown
  targets?: Target[]
  /** Share of all CPUs busy with other processes, sampled while the bench was idle. */
  backgroundCpu?: number[]
  /** Share of the machine's CPU time the hypervisor gave to others during the run. */
  stealShare?: number
  totalSeconds?: number
}

export interface Target {
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
    const value = r.login.okPerSecond / r.ceiling.perSecond
    targets.push({ name: 'Login / argon2 ceiling', value, target: '≥ 0.95', met: value >= 0.95 })
  }
  if (r.routes !== undefined) {
    const value = r.routes.me.okPerSecond / r.routes.plain.okPerSecond
    targets.push({ name: 'GET /me (authenticate) / GET /plain (jwtVerify)', value, target: '≥ 0.90', met: value >= 0.9 })
  }
  if (r.mixed !== undefined) {
    const value = r.mixed.loaded.latency.p99 / r.mixed.unloaded.latency.p99
    targets.push({ name: 'GET /me p99 during a login flood / unloaded', value, target: '≤ 2', met: value <= 2 })
  }
  if (r.overload !== undefined) {
    const statuses = Object.keys(r.overload.statuses)
    const shed = r.overload.statuses['503'] ?? 0
    const met = shed > 0 && statuses.every(status => LOGIN_STATUSES.has(status)) && r.overload.errors === 0 && r.overload.timeouts === 0
    targets.push({ name: 'Overload: shed with 503 (only 200/401/429/503, no errors)', value: shed / r.overload.responses, target: '503s, no other 5xx', met })
  }
  if (r.enumeration !== undefined) {
    const value = r.enumeration.medianSpread
    targets.push({ name: 'Enumeration: spread of the failure medians', value, target: '≤ 10 %', met: value <= 0.1 })
  }
  return targets
}

const count = (n: number): string => Math.round(n).toLocaleString('en-US')
const rate = (n: number): string => n >= 1000 ? count(n) : n.toFixed(1)
const ms = (n: number): string => Number.isNaN(n) ? '–' : n >= 100 ? `${n.toFixed(0)} ms` : n >= 10 ? `${n.toFixed(1)} ms` : `${n.toFixed(2)} ms`
const ratio = (n: number): string => `${n.toFixed(2)} ×`
const mib = (bytes: number | undefined): string => bytes === undefined ? '–' : `${(bytes / 2 ** 20).toFixed(0)} MiB`
const cpu = (r: LoadResult): string => r.serverCpuMicrosPerResponse === undefined ? '–' : `${r.serverCpuMicrosPerResponse.toFixed(0)} µs`
const verdict = (met: boolean): string => met ? 'yes' : '**no**'

function otherStatuses (r: LoadResult, expected: string): string {
  const others = Object.entries(r.statuses).filter(([status]) => status !== expected)
  const problems = [...others.map(([status, n]) => `${n} × ${status}`)]
  if (r.errors > 0) problems.push(`${r.errors} errors`)
  if (r.timeouts > 0) problems.push(`${r.timeouts} timeouts`)
  return problems.length === 0 ? '0' : problems.join(', ')
}

export function renderTable (r: BenchResults): string {
  const targets = r.targets ?? checkTargets(r)
  const target = (name: string): Target | undefined => targets.find(t => t.name === name)
  const rows: string[][] = []
  const row = (...cells: string[]): void => { rows.push(cells) }

  if (r.ceiling !== undefined) {
    const runs = r.ceiling.runs.map(run => rate(run.perSecond)).join(' / ')
    row(`argon2 ceiling: raw verify, ${r.ceiling.runs[0]?.inFlight} at once, no HTTP`, `${rate(r.ceiling.perSecond)} /s (${runs})`, '–', '–', '1.00 ×', '', '', '–', '–')
  }
  if (r.login !== undefined) {
    const ok = r.login.byStatus['200']
    const t = target('Login / argon2 ceiling')
    row(`POST /Auth/Login, ${r.login.connections} connections, ${r.settings.accounts} accounts`, `${rate(r.login.okPerSecond)} /s`, ms(ok?.p50 ?? NaN), ms(ok?.p99 ?? NaN),
      t === undefined ? '' : `${ratio(t.value)} ceiling`, '≥ 0.95 ×', t === undefined ? '' : verdict(t.met), cpu(r.login), otherStatuses(r.login, '200'))
  }
  if (r.handLogin !== undefined) {
    const hand = r.handLogin
    const ok = hand.byStatus['200']
    row(`POST /hand/login: hand-written (lookup, argon2 verify, jwt.sign), ${hand.connections} connections`, `${rate(hand.okPerSecond)} /s`, ms(ok?.p50 ?? NaN), ms(ok?.p99 ?? NaN),
      r.ceiling === undefined ? '' : `${ratio(hand.okPerSecond / r.ceiling.perSecond)} ceiling`, '', '', cpu(hand), otherStatuses(hand, '200'))
    if (r.login !== undefined) {
      row('Plugin Login / hand-written login', '', '', '', ratio(r.login.okPerSecond / hand.okPerSecond), '', '', '', '')
    }
  }
  if (r.routes !== undefined) {
    const { open, plain, me } = r.routes
    row('GET /open: no auth', `${rate(open.perSecond)} /s`, ms(open.latency.p50), ms(open.latency.p99), '1.00 ×', '', '', cpu(open), otherStatuses(open, '200'))
    row('GET /plain: `await request.jwtVerify()` only', `${rate(plain.perSecond)} /s`, ms(plain.latency.p50), ms(plain.latency.p99), `${ratio(plain.okPerSecond / open.okPerSecond)} /open`, '', '', cpu(plain), otherStatuses(plain, '200'))
    const t = target('GET /me (authenticate) / GET /plain (jwtVerify)')
    row('GET /me: `authenticate`, memory stores', `${rate(me.perSecond)} /s`, ms(me.latency.p50), ms(me.latency.p99), `${ratio(me.okPerSecond / plain.okPerSecond)} /plain`, '≥ 0.90 ×', t === undefined ? '' : verdict(t.met), cpu(me), otherStatuses(me, '200'))
  }
  if (r.redis !== undefined) {
    const { plain, me } = r.redis
    row('GET /plain (Redis server)', `${rate(plain.perSecond)} /s`, ms(plain.latency.p50), ms(plain.latency.p99), '', '', '', cpu(plain), otherStatuses(plain, '200'))
    row('GET /me: `authenticate`, Redis revocations', `${rate(me.perSecond)} /s`, ms(me.latency.p50), ms(me.latency.p99), `${ratio(me.okPerSecond / plain.okPerSecond)} /plain`, '(no target)', '', cpu(me), otherStatuses(me, '200'))
  }
  if (r.mixed !== undefined) {
    const { unloaded, loaded, flood } = r.mixed
    row(`GET /me at ${r.settings.mixedRate} req/s, unloaded`, `${rate(unloaded.perSecond)} /s`, ms(unloaded.latency.p50), ms(unloaded.latency.p99), '1.00 ×', '', '', cpu(unloaded), otherStatuses(unloaded, '200'))
    const t = target('GET /me p99 during a login flood / unloaded')
    row(`GET /me at ${r.settings.mixedRate} req/s, during a login flood (${rate(flood.okPerSecond)} logins/s)`, `${rate(loaded.perSecond)} /s`, ms(loaded.latency.p50), ms(loaded.latency.p99),
      t === undefined ? '' : `${ratio(t.value)} p99`, '≤ 2 × p99', t === undefined ? '' : verdict(t.met), cpu(loaded), otherStatuses(loaded, '200'))
  }
  if (r.logout !== undefined) {
    row('POST /Auth/Logout, memory stores', `${rate(r.logout.memory.perSecond)} /s`, ms(r.logout.memory.latency.p50), ms(r.logout.memory.latency.p99), '', '', '', cpu(r.logout.memory), otherStatuses(r.logout.memory, '204'))
    if (r.logout.redis !== undefined) {
      row('POST /Auth/Logout, Redis revocations', `${rate(r.logout.redis.perSecond)} /s`, ms(r.logout.redis.latency.p50), ms(r.logout.redis.latency.p99), '', '', '', cpu(r.logout.redis), otherStatuses(r.logout.redis, '204'))
    }
  }
  if (r.overload !== undefined) {
    const o = r.overload
    const ok = o.byStatus['200']
    const t = target('Overload: shed with 503 (only 200/401/429/503, no errors)')
    const statuses = Object.entries(o.statuses).map(([status, n]) => `${count(n)} × ${status}`).join(', ')
    row(`Overload: ${o.connections} concurrent logins (peak RSS ${mib(o.peakRss)}, idle ${mib(o.idleRss)})`, `${rate(o.okPerSecond)} 200/s; ${statuses}`, ms(ok?.p50 ?? NaN), ms(ok?.p99 ?? NaN),
      t === undefined ? '' : `${(t.value * 100).toFixed(1)} % shed`, '503, no other 5xx', t === undefined ? '' : verdict(t.met), cpu(o), [o.errors > 0 ? `${o.errors} errors` : '', o.timeouts > 0 ? `${o.timeouts} timeouts` : ''].filter(Boolean).join(', ') || '0 errors')
  }
  if (r.enumeration !== undefined) {
    const { byKind, medianSpread, statuses } = r.enumeration
    const t = target('Enumeration: spread of the failure medians')
    const medians = `unknown e-mail ${ms(byKind.unknownEmail.p50)}, wrong password ${ms(byKind.wrongPassword.p50)}, inactive ${ms(byKind.inactiveAccount.p50)}`
    const others = Object.entries(statuses).filter(([status]) => status !== '401').map(([status, n]) => `${n} × ${status}`).join(', ') || '0'
    row('Login failures, medians (interleaved, one per hashing slot)', medians, '', '', `${(medianSpread * 100).toFixed(1)} % spread`, '≤ 10 %', t === undefined ? '' : verdict(t.met), '–', `${others} (non-401)`)
  }

  const header = ['Scenario', 'Throughput', 'p50', 'p99', 'Ratio', 'Target', 'Met', 'Server CPU / resp.', 'Unexpected statuses']
  const lines = [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map(cells => `| ${cells.join(' | ')} |`)
  ]
  const m = r.machine
  const s = r.settings
  lines.unshift(
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node} (${m.platform}); UV_THREADPOOL_SIZE=${s.threadPoolSize}, ` +
    `${s.hashConcurrency} hashes at once; argon2id m=${(s.argon2 as { memoryCost: number }).memoryCost}, t=${(s.argon2 as { timeCost: number }).timeCost}, ` +
    `p=${(s.argon2 as { parallelism: number }).parallelism}; ${s.secondsPerRun} s per run; ${r.date}` +
    (r.backgroundCpu === undefined ? '' : `; CPU busy with other processes while the bench idled: ${r.backgroundCpu.map(b => `${(b * 100).toFixed(0)} %`).join(', ')}`) +
    (r.stealShare === undefined ? '' : `; steal during the run: ${(r.stealShare * 100).toFixed(1)} %`), '')
  if (targets.length > 0) {
    const met = targets.filter(t => t.met).length
    lines.push('', `Targets met: ${met} of ${targets.length}${targets.some(t => !t.met) ? ` (missed: ${targets.filter(t => !t.met).map(t => t.name).join('; ')})` : ''}`)
  }
  if (r.login?.eventLoopCpuMicrosPerResponse !== undefined && r.login.loadGeneratorCpuMicrosPerResponse !== undefined) {
    const { eventLoopCpuMicrosPerResponse: loop, loadGeneratorCpuMicrosPerResponse: generator, okPerSecond } = r.login
    const share = (loop + generator) * okPerSecond / 1e6 / m.cpus
    lines.push('', `Login, per request: the server's event loop used ${(loop / 1000).toFixed(2)} ms of CPU and the load generator ${(generator / 1000).toFixed(2)} ms; ` +
      `at ${rate(okPerSecond)} logins/s that is ${(share * 100).toFixed(1)} % of the ${m.cpus} cores, taken from the argon2 threads.`)
  }
  for (const note of r.notes) lines.push(`Note: ${note}`)
  return lines.join('\n')
}
