/**
 * The physical limit for Login on this machine: raw @node-rs/argon2 verifications per second at the
 * plugin's parameters, with `inFlight` verifications running at once and nothing else (no HTTP, no
 * event-loop work). Run as a child process with the server's UV_THREADPOOL_SIZE:
 *
 *   node ceiling.js <inFlight> <durationMs> [warmupMs]   → prints one JSON line
 */
import { pathToFileURL } from 'node:url'
import { hash, verify } from '@node-rs/argon2'
import { DEFAULT_ARGON2 } from '../../lib/password/argon2-options.js'
import { BENCH_PASSWORD } from './settings.js'

export interface CeilingResult {
  inFlight: number
  durationMs: number
  verifications: number
  perSecond: number
  /** CPU time (all threads) per verification, in milliseconds. */
  cpuMsPerVerification: number
}

export async function measureCeiling (inFlight: number, durationMs: number, warmupMs = 1000): Promise<CeilingResult> {
  const params = { ...DEFAULT_ARGON2 }
  const stored = await hash(BENCH_PASSWORD, params)
  const password = BENCH_PASSWORD.normalize('NFC')
  const run = async (ms: number): Promise<{ count: number, elapsed: number }> => {
    let count = 0
    const start = performance.now()
    const end = start + ms
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        if (!await verify(stored, password, params)) throw new Error('the ceiling\'s verification failed')
        count++
      }
    }))
    return { count, elapsed: performance.now() - start }
  }
  await run(warmupMs)
  const cpuBefore = process.cpuUsage()
  const { count, elapsed } = await run(durationMs)
  const cpu = process.cpuUsage(cpuBefore)
  return {
    inFlight,
    durationMs: Math.round(elapsed),
    verifications: count,
    perSecond: count / elapsed * 1000,
    cpuMsPerVerification: (cpu.user + cpu.system) / 1000 / count
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [inFlight = '2', durationMs = '5000', warmupMs = '1000'] = process.argv.slice(2)
  measureCeiling(Number(inFlight), Number(durationMs), Number(warmupMs)).then(
    (result) => { console.log(JSON.stringify(result)) },
    (err: unknown) => { console.error(err); process.exit(1) }
  )
}
