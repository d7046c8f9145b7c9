import { rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { hashPassword } from '../../lib/index.js'
import { DEFAULT_ARGON2 } from '../../lib/password/argon2-options.js'
import { EXAMPLE_SERVER_NODE_FLAGS } from '../node-process.js'
import { cpuTimeOf, memoryOf, startChild } from './child.js'
import { load, type LoadResult } from './load.js'
import { log, loginLoad, type Server } from './scenarios.js'
import { ACTIVE_ACCOUNTS, activeEmail, activeId, BENCH_PASSWORD, BENCH_SECRET } from './settings.js'

const EXAMPLE_SERVER = fileURLToPath(new URL('../server.js', import.meta.url))
const PRELOAD = new URL('./example-preload.js', import.meta.url).href

/** A login flood on a fresh server process, with its memory read from outside (and, for the bench server, inside). */
export type OverloadResult = LoadResult & {
  /** VmRSS before the flood, VmHWM after it (the kernel's own peak), and the highest VmRSS sampled every 100 ms. */
  idleRss?: number
  peakRss?: number
  sampledPeakRss?: number
  /** process.memoryUsage.rss() sampled every 100 ms by the server itself. */
  insidePeakRss?: number
  serverCpuMs?: number
  stats?: unknown
}

/** Floods `server` with `connections` concurrent logins over the bench accounts. */
export async function overload (server: Server, connections: number, seconds: number, inside?: () => Promise<number | undefined>): Promise<OverloadResult> {
  const idle = memoryOf(server.pid)
  let sampledPeakRss = idle.rss ?? 0
  const sampler = setInterval(() => { sampledPeakRss = Math.max(sampledPeakRss, memoryOf(server.pid).rss ?? 0) }, 100)
  log(`overload (${server.name}): ${connections} concurrent logins`)
  try {
    const result = await load(loginLoad(server, connections, seconds))
    return {
      ...result,
      idleRss: idle.rss,
      peakRss: memoryOf(server.pid).peakRss,
      sampledPeakRss,
      insidePeakRss: await inside?.(),
      serverCpuMs: cpuTimeOf(server.pid)
    }
  } finally {
    clearInterval(sampler)
  }
}

/**
 * The example server as `npm start` runs it (Node's flags included), with the bench's accounts (and their
 * ids) from an AUTH_ACCOUNTS_FILE and the per-IP limit off: its whole demo (API docs, the browser app's second
 * registration, audit logging) comes with it. `withSessions` loads example-preload.ts for Logout runs.
 */
export async function startExampleServer (runId: string, withSessions = false): Promise<Server> {
  const passwordHash = await hashPassword(BENCH_PASSWORD, DEFAULT_ARGON2)
  const file = join(tmpdir(), `fpa-bench-accounts-${runId}.json`)
  await writeFile(file, JSON.stringify(Array.from({ length: ACTIVE_ACCOUNTS }, (_, i) => ({ email: activeEmail(i), id: activeId(i), passwordHash }))))
  const child = await startChild(EXAMPLE_SERVER, {
    PORT: '0', HOST: '127.0.0.1', JWT_SECRET: BENCH_SECRET, AUTH_ACCOUNTS_FILE: file, AUTH_RATE_LIMIT: 'off', LOG_LEVEL: 'warn'
  }, /listening on (http:\/\/\S+)/, withSessions ? [...EXAMPLE_SERVER_NODE_FLAGS, `--import=${PRELOAD}`] : EXAMPLE_SERVER_NODE_FLAGS)
    .finally(async () => { await rm(file, { force: true }) }) // read at start, not needed after
  return { ...child, name: 'example', url: child.match[1]!, pid: child.process.pid! }
}
