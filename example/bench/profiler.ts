/**
 * CPU profiles of the bench server over a measured run only (not its start-up or the sessions the bench
 * creates between runs): with BENCH_PROFILE_DIR set, POST /bench/profile/start and /bench/profile/stop
 * record one .cpuprofile each (Chrome DevTools, speedscope, or `node dist/example/bench/profile-summary.js`).
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'

export function registerProfiler (app: FastifyInstance, directory: string): void {
  const session = new Session()
  session.connect()
  let count = 0
  app.post('/bench/profile/start', async () => {
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: 100 })
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
