/**
 * The breached-password check (contract §20) under load: Login on a server with a range service and a
 * warm cache against the same server without one, paired (A B, B A, …); then Login while the range service
 * hangs, on a server that caches nothing, so that every login waits for the lookup until its timeout.
 * The range service is this process's own, on 127.0.0.1.
 */
import { Agent, createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { load, type LoadResult } from './load.js'
import { pairedRatio, okRates, type PairedRatio } from './pairs.js'
import { LOGIN_CONNECTIONS, log, loginLoad, startServer, type Server } from './scenarios.js'
import { activeEmail, BENCH_PASSWORD, type Profile } from './settings.js'
import { timedPost } from './timed-post.js'

/** The range service's lookup timeout on the hanging run: the plugin's default. */
export const BREACH_TIMEOUT_MS = 1500
/** Logins sent while the service hangs, and how many at once. */
const HANG_LOGINS = 12
const HANG_CONCURRENCY = 4

export interface BreachResult {
  /** Each round's Login without the check and with it (warm cache), measured side by side. */
  rounds: { plain: LoadResult[], checked: LoadResult[] }
  /** What a login costs with the check over what it costs without: plain rate / checked rate, per pair. */
  cost: PairedRatio
  hang: {
    timeoutMs: number
    /** One login's time without the check, sequentially: the hash and the rest (median and largest). */
    alone: { median: number, max: number }
    /** Every login's time while the service hangs, `concurrency` at once. */
    latencies: number[]
    concurrency: number
    statuses: number[]
  }
}

/** A range service that answers a few SUFFIX:COUNT lines (the bench password's suffix absent), or never. */
async function startRangeService (): Promise<{ url: string, hang: () => void, requests: () => number, close: () => Promise<void> }> {
  let hanging = false
  let requests = 0
  const held = new Set<ServerResponse>()
  const server = createServer((_request, response) => {
    requests++
    if (hanging) { held.add(response); return }
    response.writeHead(200, { 'content-type': 'text/plain' })
    response.end(Array.from({ length: 800 }, (_, i) => `${i.toString(16).toUpperCase().padStart(35, '0')}:${i % 3}`).join('\r\n'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/range/`,
    hang: () => { hanging = true },
    requests: () => requests,
    close: async () => {
      for (const response of held) response.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

/** `count` logins (accounts from `first`), `concurrency` at once; each one's time in ms and its status. */
async function timedLogins (server: Server, count: number, concurrency: number, first: number): Promise<{ ms: number[], statuses: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const ms: number[] = []
  const statuses: number[] = []
  try {
    for (let i = 0; i < count; i += concurrency) {
      const batch = await Promise.all(Array.from({ length: Math.min(concurrency, count - i) }, async (_, j) =>
        await timedPost(agent, new URL('/Auth/Login', server.url), JSON.stringify({ email: activeEmail(first + i + j), password: BENCH_PASSWORD }))))
      for (const answer of batch) { ms.push(answer.ms); statuses.push(answer.status) }
    }
  } finally {
    agent.destroy()
  }
  return { ms, statuses }
}

export async function breachSection (profile: Profile, seconds: number, rounds: number): Promise<BreachResult> {
  const range = await startRangeService()
  const plain = await startServer(profile, {}, 'breach-plain')
  const checked = await startServer(profile, { BENCH_PWNED_RANGE_URL: range.url }, 'breach-checked')
  try {
    log('breached-password check: Login with a warm cache against Login without the check, paired')
    // The warm-up fills the cache: every account shares the bench password, so one prefix serves all.
    for (const server of [plain, checked]) await load(loginLoad(server, LOGIN_CONNECTIONS, 1.5))
    const measured = { plain: [] as LoadResult[], checked: [] as LoadResult[] }
    for (let round = 1; round <= rounds; round++) {
      // A B, then B A: drift during a round weighs on both alike.
      for (const which of round % 2 === 1 ? ['plain', 'checked'] as const : ['checked', 'plain'] as const) {
        measured[which].push(await load(loginLoad(which === 'plain' ? plain : checked, LOGIN_CONNECTIONS, seconds)))
      }
      log(`round ${round}: login ${measured.plain.at(-1)!.okPerSecond.toFixed(1)}/s, with the check ${measured.checked.at(-1)!.okPerSecond.toFixed(1)}/s`)
    }
    log(`the range service was asked ${range.requests()} time(s)`)

    log('Login while the range service hangs (a server that caches nothing)')
    const alone = await timedLogins(plain, 10, 1, 700)
    await checked.stop()
    range.hang()
    const hanging = await startServer(profile, {
      BENCH_PWNED_RANGE_URL: range.url, BENCH_PWNED_TIMEOUT_MS: String(BREACH_TIMEOUT_MS), BENCH_PWNED_CACHE_BYTES: '0'
    }, 'breach-hang')
    try {
      const during = await timedLogins(hanging, HANG_LOGINS, HANG_CONCURRENCY, 720)
      const sorted = [...alone.ms].sort((a, b) => a - b)
      return {
        rounds: measured,
        cost: pairedRatio(okRates(measured.plain), okRates(measured.checked)),
        hang: {
          timeoutMs: BREACH_TIMEOUT_MS,
          alone: { median: sorted[sorted.length >> 1]!, max: sorted.at(-1)! },
          latencies: during.ms,
          concurrency: HANG_CONCURRENCY,
          statuses: during.statuses
        }
      }
    } finally {
      await hanging.stop()
    }
  } finally {
    await Promise.all([plain.stop(), checked.stop().catch(() => {})])
    await range.close()
  }
}
