/**
 * GET requests at a steady rate (open loop): one request every 1/rate seconds whatever the answers do,
 * over keep-alive connections. autocannon's own rate limit sends each second's quota in a burst, which
 * measures the burst, not the route; this measures the route's latency at a given load.
 */
import { Agent, request } from 'node:http'
import { summarizeRun, type LoadResult } from './load.js'

export interface PacedOptions {
  url: string
  path: string
  ratePerSecond: number
  durationSeconds: number
  /** Headers of the n-th request. */
  headers: (n: number) => Record<string, string>
  /** Most connections open at once (requests beyond wait for one). */
  maxConnections?: number
}

export async function paced ({ url, path, ratePerSecond, durationSeconds, headers, maxConnections = 16 }: PacedOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: maxConnections })
  const target = new URL(path, url)
  const byStatus = new Map<number, number[]>()
  let errors = 0
  const pending = new Set<Promise<void>>()
  const send = (n: number): void => {
    const started = performance.now()
    const done = new Promise<void>((resolve) => {
      const req = request(target, { agent, headers: headers(n) }, (res) => {
        res.resume()
        res.on('end', () => {
          const status = res.statusCode ?? 0
          let samples = byStatus.get(status)
          if (samples === undefined) byStatus.set(status, samples = [])
          samples.push(performance.now() - started)
          resolve()
        })
      })
      req.on('error', () => { errors++; resolve() })
      req.end()
    })
    pending.add(done)
    done.then(() => pending.delete(done), () => {}) // `done` never rejects: errors resolve it
  }

  const interval = 1000 / ratePerSecond
  const started = performance.now()
  const total = Math.round(ratePerSecond * durationSeconds)
  let sent = 0
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      // Send every request whose time has come, then sleep until the next one is due.
      const due = Math.min(total, Math.floor((performance.now() - started) / interval) + 1)
      while (sent < due) send(sent++)
      if (sent >= total) resolve()
      else setTimeout(tick, Math.max(0, started + sent * interval - performance.now()))
    }
    tick()
  })
  await Promise.all(pending)
  agent.destroy()
  const elapsed = (performance.now() - started) / 1000

  const result = summarizeRun({ path, connections: maxConnections, durationSeconds: elapsed, errors, timeouts: 0, serverCpuMs: undefined }, byStatus)
  Object.defineProperty(result, 'samples', { value: byStatus, enumerable: false })
  return result
}
