/**
 * The timing side channel of Login failures: unknown e-mail, wrong password and inactive account,
 * interleaved on the same keep-alive connections so all three kinds meet the same conditions. Few
 * requests are in flight (one per hashing slot), so latencies show each failure's own cost rather than
 * time spent queueing. Every kind spreads over many e-mails, so the per-e-mail throttle never answers.
 */
import { Agent } from 'node:http'
import { summarize, type LatencySummary } from './load.js'
import { ACTIVE_ACCOUNTS, activeEmail, BENCH_PASSWORD, INACTIVE_ACCOUNTS, inactiveEmail, WRONG_PASSWORD } from './settings.js'
import { timedPost } from './timed-post.js'

export type FailureKind = 'unknownEmail' | 'wrongPassword' | 'inactiveAccount'
const KINDS: FailureKind[] = ['unknownEmail', 'wrongPassword', 'inactiveAccount']

export interface EnumerationResult {
  durationSeconds: number
  statuses: Record<string, number>
  byKind: Record<FailureKind, LatencySummary>
  /** (slowest median − fastest median) / fastest median. */
  medianSpread: number
}

export async function probeEnumeration (baseUrl: string, { workers = 2, durationSeconds = 6, runId = String(Date.now()) } = {}): Promise<EnumerationResult> {
  const url = new URL('/Auth/Login', baseUrl)
  const agent = new Agent({ keepAlive: true, maxSockets: workers })
  // Wrong passwords go to the upper half of the accounts, each at most a few times: never 5 in a row.
  let unknown = 0
  let wrong = 0
  let inactive = 0
  const bodyOf: Record<FailureKind, () => string> = {
    unknownEmail: () => JSON.stringify({ email: `nobody-${runId}-${unknown++}@bench.test`, password: BENCH_PASSWORD }),
    wrongPassword: () => JSON.stringify({ email: activeEmail(ACTIVE_ACCOUNTS / 2 + (wrong++ % (ACTIVE_ACCOUNTS / 2))), password: WRONG_PASSWORD }),
    inactiveAccount: () => JSON.stringify({ email: inactiveEmail(inactive++ % INACTIVE_ACCOUNTS), password: BENCH_PASSWORD })
  }
  const samples: Record<FailureKind, number[]> = { unknownEmail: [], wrongPassword: [], inactiveAccount: [] }
  const statuses: Record<string, number> = {}
  const started = performance.now()
  const end = started + durationSeconds * 1000
  try {
    await Promise.all(Array.from({ length: workers }, async (_, worker) => {
      for (let i = worker; performance.now() < end; i++) {
        const kind = KINDS[i % KINDS.length]!
        const { status, ms } = await timedPost(agent, url, bodyOf[kind]())
        statuses[status] = (statuses[status] ?? 0) + 1
        if (status === 401) samples[kind].push(ms)
      }
    }))
  } finally {
    agent.destroy()
  }
  const byKind = {
    unknownEmail: summarize(samples.unknownEmail),
    wrongPassword: summarize(samples.wrongPassword),
    inactiveAccount: summarize(samples.inactiveAccount)
  }
  const medians = KINDS.map(kind => byKind[kind].p50)
  return {
    durationSeconds: (performance.now() - started) / 1000,
    statuses,
    byKind,
    medianSpread: (Math.max(...medians) - Math.min(...medians)) / Math.min(...medians)
  }
}
