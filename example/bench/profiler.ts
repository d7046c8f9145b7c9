/**
 * CPU profiles of the bench server over a measured run only (not its start-up or the sessions the bench
 * creates between runs): with BENCH_PROFILE_DIR set, POST /bench/profile/start and /bench/profile/stop
 * record one .cpuprofile each (Chrome DevTools, speedscope, or `node dist/example/bench/profile-summary.js`).
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'

/**
 * Microseconds between samples (BENCH_PROFILE_INTERVAL_US, default 100). At 100 µs the sampling itself
 * slows a request of about 70 µs by a third on the bench machine, evening out the servers it compares:
 * 1000 keeps the profiled runs' ratios close to the unprofiled ones, with fewer samples.
 */
const SAMPLING_MICROS = Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 100)
if (!Number.isSafeInteger(SAMPLING_MICROS) || SAMPLING_MICROS < 1) throw new Error('BENCH_PROFILE_INTERVAL_US: a whole number of microseconds from 1')

export function registerProfiler (app: FastifyInstance, directory: string): void {
  const session = new Session()
  session.connect()
  let count = 0
  app.post('/bench/profile/start', async () => {
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_MICROS })
    await session.post('Profiler.start')
    return { started: true }
  })
  app.post<{ Body: { name?: string } | undefined }>('/bench/profile/stop', async (request) => {
    const { profile } = await session.post('Profiler.stop')
    const name = String(request.body?.name ?? 'run').replace(/[^\w.-]/g, '_')
    const file = join(directory, `${String(++count).padStart(2, '0')}-${name}.cpuprofile`)
    await mkdir(directory, { recursive: true })
    await writeFile(file, JSON.stringify(profile))
    return { file }
  })
  app.addHook('onClose', async () => { session.disconnect() })
}
