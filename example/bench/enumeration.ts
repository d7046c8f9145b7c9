/**
 * The timing side channels of the routes whose answer could tell whether an address has an account.
 * Login: unknown e-mail, wrong password and inactive account (401 each). ForgotPassword: unknown e-mail,
 * active account and inactive account (202 each). The kinds are interleaved on the same keep-alive
 * connections so all meet the same conditions. Few requests are in flight (one per hashing slot), so
 * latencies show each kind's own cost rather than time spent queueing. Every kind spreads over many
 * e-mails, so the per-e-mail throttle never answers.
 */
import { Agent } from 'node:http'
import { summarize, type LatencySummary } from './load.js'
import { ACTIVE_ACCOUNTS, activeEmail, BENCH_PASSWORD, INACTIVE_ACCOUNTS, inactiveEmail, WRONG_PASSWORD } from './settings.js'
import { timedPost } from './timed-post.js'

export type FailureKind = 'unknownEmail' | 'wrongPassword' | 'inactiveAccount' | 'activeAccount' | 'pendingAddress'

export interface EnumerationResult {
  route: 'login' | 'forgot' | 'register'
  durationSeconds: number
  statuses: Record<string, number>
  byKind: Partial<Record<FailureKind, LatencySummary>>
  /** (slowest median − fastest median) / fastest median. */
  medianSpread: number
}

export async function probeEnumeration (
  baseUrl: string,
  { route = 'login', workers = 2, durationSeconds = 6, runId = String(Date.now()) }: { route?: 'login' | 'forgot' | 'register', workers?: number, durationSeconds?: number, runId?: string } = {}
): Promise<EnumerationResult> {
  const url = new URL({ login: '/Auth/Login', forgot: '/Auth/ForgotPassword', register: '/Auth/Register' }[route], baseUrl)
  const expected = route === 'login' ? 401 : 202
  const agent = new Agent({ keepAlive: true, maxSockets: workers })
  // Wrong passwords go to the upper half of the accounts, each at most a few times: never 5 in a row.
  let unknown = 0
  let wrong = 0
  let inactive = 0
  let active = 0
  const bodyOf: Partial<Record<FailureKind, () => string>> = {
    unknownEmail: () => JSON.stringify({ email: `nobody-${runId}-${unknown++}@bench.test`, password: BENCH_PASSWORD }),
    inactiveAccount: () => JSON.stringify({ email: inactiveEmail(inactive++ % INACTIVE_ACCOUNTS), password: BENCH_PASSWORD })
  }
  let pending = 0
  if (route === 'login') {
    bodyOf.wrongPassword = () => JSON.stringify({ email: activeEmail(ACTIVE_ACCOUNTS / 2 + (wrong++ % (ACTIVE_ACCOUNTS / 2))), password: WRONG_PASSWORD })
  } else if (route === 'forgot') {
    bodyOf.activeAccount = () => JSON.stringify({ email: activeEmail(active++ % ACTIVE_ACCOUNTS) })
  } else {
    // Register: a new address each time, one of 50 addresses registered again and again (pending), a taken
    // address (active account) and an inactive account's address, all with the same valid password.
    const registration = (email: string): string => JSON.stringify({ email, password: BENCH_PASSWORD, confirmPassword: BENCH_PASSWORD })
    bodyOf.unknownEmail = () => registration(`new-${runId}-${unknown++}@bench.test`)
    bodyOf.pendingAddress = () => registration(`pending-${runId}-${pending++ % 50}@bench.test`)
    bodyOf.activeAccount = () => registration(activeEmail(active++ % ACTIVE_ACCOUNTS))
    bodyOf.inactiveAccount = () => registration(inactiveEmail(inactive++ % INACTIVE_ACCOUNTS))
  }
  const KINDS = Object.keys(bodyOf) as FailureKind[]
  const samples: Partial<Record<FailureKind, number[]>> = Object.fromEntries(KINDS.map((kind) => [kind, []]))
  const statuses: Record<string, number> = {}
  const started = performance.now()
  const end = started + durationSeconds * 1000
  try {
    await Promise.all(Array.from({ length: workers }, async (_, worker) => {
      for (let i = worker; performance.now() < end; i++) {
        const kind = KINDS[i % KINDS.length]!
        const { status, ms } = await timedPost(agent, url, bodyOf[kind]!())
        statuses[status] = (statuses[status] ?? 0) + 1
        if (status === expected) samples[kind]!.push(ms)
      }
    }))
  } finally {
    agent.destroy()
  }
  const byKind = Object.fromEntries(KINDS.map((kind) => [kind, summarize(samples[kind]!)])) as Partial<Record<FailureKind, LatencySummary>>
  const medians = KINDS.map(kind => byKind[kind]!.p50)
  return {
    route,
    durationSeconds: (performance.now() - started) / 1000,
    statuses,
    byKind,
    medianSpread: (Math.max(...medians) - Math.min(...medians)) / Math.min(...medians)
  }
}
