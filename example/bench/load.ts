/**
 * One autocannon run against the server under test, summarised: responses per second, latency
 * percentiles of every response and of each status code apart, and the server's CPU time per response.
 * Latencies are recorded here from autocannon's per-response times (milliseconds, not rounded).
 */
import autocannon from 'autocannon'
import { cpuJiffies, cpuTimeOf } from './child.js'
import type { RoundTrips } from './round-trips.js'

export interface LoadOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:1234 */
  url: string
  path: string
  method?: 'GET' | 'POST'
  connections: number
  durationSeconds: number
  /** Stop after this many requests instead of after `durationSeconds` (runs that spend one token per request). */
  amount?: number
  /** Headers of every request. */
  headers?: Record<string, string>
  /** Extra headers per connection (called once for each connection, in order). */
  connectionHeaders?: (connection: number) => Record<string, string>
  /** Extra headers of each request, called once per request (each request is then built anew). */
  requestHeaders?: () => Record<string, string>
  /** The requests each connection sends in turn (called once for each connection); built once. */
  connectionRequests?: (connection: number) => autocannon.Request[]
  /** Process to charge CPU time to (the server). */
  serverPid?: number
  /** Keep every latency (by status) in `samples`, to pool several runs with `merge`. */
  keepSamples?: boolean
  /** With BENCH_PROFILE_DIR set, the server records a CPU profile of this run under this name (example/bench/profiler.ts); default: the server's port and the path. */
  profile?: string
}

export interface LatencySummary {
  count: number
  p50: number
  p99: number
  max: number
}

export interface LoadResult {
  path: string
  connections: number
  durationSeconds: number
  responses: number
  /** Responses per second, whatever their status. */
  perSecond: number
  /** 2xx responses per second. */
  okPerSecond: number
  statuses: Record<string, number>
  /** Connection errors and timeouts (requests without a response). */
  errors: number
  timeouts: number
  latency: LatencySummary
  byStatus: Record<string, LatencySummary>
  /** Server CPU time (all threads) per response, in microseconds. */
  serverCpuMicrosPerResponse?: number
  /** The part of it spent on the server's main thread (the event loop). */
  eventLoopCpuMicrosPerResponse?: number
  /** This process's CPU time (the load generator) per response, in microseconds. */
  loadGeneratorCpuMicrosPerResponse?: number
  /** Share of the machine's CPU time left idle during the run (all processes; Linux). */
  machineIdleShare?: number
  /** Every latency by status, with `keepSamples` (left out of the JSON). */
  samples?: Map<number, number[]>
  /** Store round trips per response, when counted (round-trips.ts). */
  roundTrips?: RoundTrips
}

export function summarize (samples: number[]): LatencySummary {
  if (samples.length === 0) return { count: 0, p50: NaN, p99: NaN, max: NaN }
  const sorted = Float64Array.from(samples).sort()
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]! }
}

const profiling = process.env.BENCH_PROFILE_DIR !== undefined && process.env.BENCH_PROFILE_DIR !== ''

/** False when the server has no profiler (the example server): the run is then measured unprofiled. */
async function profiler (url: string, action: 'start' | 'stop', name: string): Promise<boolean> {
  const response = await fetch(`${url}/bench/profile/${action}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) })
  if (response.status === 404) return false
  if (!response.ok) throw new Error(`profiler ${action}: ${response.status} ${await response.text()}`)
  return true
}

export async function load (options: LoadOptions): Promise<LoadResult> {
  const name = options.profile ?? `${new URL(options.url).port}${options.path.replace(/\W+/g, '-')}`
  if (!profiling || !await profiler(options.url, 'start', name)) return await measure(options)
  try {
    return await measure(options)
  } finally {
    await profiler(options.url, 'stop', name)
  }
}

async function measure (options: LoadOptions): Promise<LoadResult> {
  const { url, path, method = 'GET', connections, durationSeconds, amount, headers = {}, connectionHeaders, requestHeaders, connectionRequests, serverPid, keepSamples = false } = options
  const request: autocannon.Request = { method, path, headers }
  if (requestHeaders !== undefined) request.setupRequest = (built) => ({ ...built, headers: { ...built.headers, ...requestHeaders() } })
  let connection = 0
  const setupClient = connectionHeaders === undefined && connectionRequests === undefined
    ? undefined
    : (client: autocannon.Client) => {
        const n = connection++
        if (connectionRequests !== undefined) client.setRequests(connectionRequests(n).map(r => ({ method, path, ...r, headers: { ...headers, ...r.headers } })))
        if (connectionHeaders !== undefined) client.setHeaders({ ...headers, ...connectionHeaders(n) })
      }

  const byStatus = new Map<number, number[]>()
  const cpuBefore = serverPid === undefined ? undefined : cpuTimeOf(serverPid)
  const loopBefore = serverPid === undefined ? undefined : cpuTimeOf(serverPid, true)
  const ownBefore = process.cpuUsage()
  const machineBefore = cpuJiffies()
  const started = performance.now()
  let lastResponseAt = started
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({
      url,
      connections,
      duration: durationSeconds,
      ...(amount === undefined ? {} : { amount }),
      requests: [request],
      setupClient,
      timeout: 30
    }, (err, done) => { if (err !== null && err !== undefined) reject(err); else resolve(done) })
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      lastResponseAt = performance.now()
      let samples = byStatus.get(statusCode)
      if (samples === undefined) byStatus.set(statusCode, samples = [])
      samples.push(responseTime)
    })
  })
  // autocannon reports a run that stops after `amount` requests only at its next one-second tick.
  const elapsedSeconds = ((amount === undefined ? performance.now() : lastResponseAt) - started) / 1000
  const cpuAfter = serverPid === undefined ? undefined : cpuTimeOf(serverPid)
  const loopAfter = serverPid === undefined ? undefined : cpuTimeOf(serverPid, true)
  const own = process.cpuUsage(ownBefore)
  const machineAfter = cpuJiffies()
  const summary = summarizeRun({
    path,
    connections,
    durationSeconds: elapsedSeconds,
    errors: result.errors,
    timeouts: result.timeouts,
    serverCpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
    eventLoopCpuMs: loopBefore === undefined || loopAfter === undefined ? undefined : loopAfter - loopBefore,
    loadGeneratorCpuMs: (own.user + own.system) / 1000,
    machineIdleShare: machineBefore === undefined || machineAfter === undefined || machineAfter.total === machineBefore.total
      ? undefined
      : 1 - (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)
  }, byStatus)
  if (keepSamples) Object.defineProperty(summary, 'samples', { value: byStatus, enumerable: false })
  return summary
}

export interface RunFacts {
  path: string
  connections: number
  durationSeconds: number
  errors: number
  timeouts: number
  serverCpuMs: number | undefined
  eventLoopCpuMs?: number
  loadGeneratorCpuMs?: number
  machineIdleShare?: number
}

/** A run's result from its latencies by status. */
export function summarizeRun (facts: RunFacts, byStatus: Map<number, number[]>): LoadResult {
  const statuses: Record<string, number> = {}
  const latencyByStatus: Record<string, LatencySummary> = {}
  const all: number[] = []
  let ok = 0
  for (const [status, samples] of [...byStatus].sort(([a], [b]) => a - b)) {
    statuses[status] = samples.length
    latencyByStatus[status] = summarize(samples)
    for (const sample of samples) all.push(sample)
    if (status >= 200 && status < 300) ok += samples.length
  }
  const { serverCpuMs, eventLoopCpuMs, loadGeneratorCpuMs, ...rest } = facts
  const perResponse = (ms: number | undefined): number | undefined => ms === undefined || all.length === 0 ? undefined : ms * 1000 / all.length
  return {
    ...rest,
    responses: all.length,
    perSecond: all.length / facts.durationSeconds,
    okPerSecond: ok / facts.durationSeconds,
    statuses,
    latency: summarize(all),
    byStatus: latencyByStatus,
    serverCpuMicrosPerResponse: perResponse(serverCpuMs),
    eventLoopCpuMicrosPerResponse: perResponse(eventLoopCpuMs),
    loadGeneratorCpuMicrosPerResponse: perResponse(loadGeneratorCpuMs)
  }
}

/** Several runs of one scenario (made with `keepSamples`) as one: latencies pooled, durations added. */
export function merge (runs: LoadResult[]): LoadResult {
  const byStatus = new Map<number, number[]>()
  for (const run of runs) {
    for (const [status, samples] of run.samples ?? []) {
      const pooled = byStatus.get(status) ?? []
      for (const sample of samples) pooled.push(sample)
      byStatus.set(status, pooled)
    }
  }
  const total = (field: 'serverCpuMicrosPerResponse' | 'eventLoopCpuMicrosPerResponse' | 'loadGeneratorCpuMicrosPerResponse'): number | undefined =>
    runs.every(run => run[field] !== undefined) ? runs.reduce((sum, run) => sum + run[field]! * run.responses / 1000, 0) : undefined
  return summarizeRun({
    path: runs[0]!.path,
    connections: runs[0]!.connections,
    durationSeconds: runs.reduce((sum, run) => sum + run.durationSeconds, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    timeouts: runs.reduce((sum, run) => sum + run.timeouts, 0),
    serverCpuMs: total('serverCpuMicrosPerResponse'),
    eventLoopCpuMs: total('eventLoopCpuMicrosPerResponse'),
    loadGeneratorCpuMs: total('loadGeneratorCpuMicrosPerResponse'),
    machineIdleShare: runs.every(run => run.machineIdleShare !== undefined)
      ? runs.reduce((sum, run) => sum + run.machineIdleShare! * run.durationSeconds, 0) / runs.reduce((sum, run) => sum + run.durationSeconds, 0)
      : undefined
  }, byStatus)
}
