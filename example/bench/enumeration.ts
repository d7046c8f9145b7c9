/**
 * The timing side channels of the routes whose answer could tell whether an address has an account.
 * Login: unknown e-mail, wrong password and inactive account (401 each). ForgotPassword: unknown e-mail,
 * active account and inactive account (202 each). ChangeEmail (contract §19): a free, a taken, a pending
 * and the account's own address (202 each, no body), each worker on a session of its own account, with its
 * password (one argon2 verification each, which stands for the recent authentication). The kinds are interleaved on the same keep-alive
 * connections so all meet the same conditions. Few requests are in flight (one per hashing slot), so
 * latencies show each kind's own cost rather than time spent queueing. Every kind spreads over many
 * e-mails, so the per-e-mail throttle never answers.
 */
import { Agent } from 'node:http'
import { summarize, type LatencySummary } from './load.js'
import { ACTIVE_ACCOUNTS, activeEmail, BENCH_PASSWORD, INACTIVE_ACCOUNTS, inactiveEmail, WRONG_PASSWORD } from './settings.js'
import { timedPost } from './timed-post.js'

export type FailureKind = 'unknownEmail' | 'wrongPassword' | 'inactiveAccount' | 'activeAccount' | 'pendingAddress' | 'ownAddress'
export type EnumerationRoute = 'login' | 'forgot' | 'register' | 'changeEmail'

export interface EnumerationResult {
  route: EnumerationRoute
  durationSeconds: number
  statuses: Record<string, number>
  byKind: Partial<Record<FailureKind, LatencySummary>>
  /** The sizes of the expected answers of each kind (headers and body, in bytes), each size seen once. */
  bytesByKind: Partial<Record<FailureKind, number[]>>
  /** (slowest median − fastest median) / fastest median. */
  medianSpread: number
}

export async function probeEnumeration (
  baseUrl: string,
  { route = 'login', workers = 2, durationSeconds = 6, runId = String(Date.now()) }: { route?: EnumerationRoute, workers?: number, durationSeconds?: number, runId?: string } = {}
): Promise<EnumerationResult> {
  const url = new URL({ login: '/Auth/Login', forgot: '/Auth/ForgotPassword', register: '/Auth/Register', changeEmail: '/Auth/ChangeEmail' }[route], baseUrl)
  const expected = route === 'login' ? 401 : 202
  const agent = new Agent({ keepAlive: true, maxSockets: workers })
  // Wrong passwords go to the upper half of the accounts, each at most a few times: never 5 in a row.
  let unknown = 0
  let wrong = 0
  let inactive = 0
  let active = 0
  const bodyOf: Partial<Record<FailureKind, (worker: number) => string>> = {
    unknownEmail: () => JSON.stringify({ email: `nobody-${runId}-${unknown++}@bench.test`, password: BENCH_PASSWORD }),
    inactiveAccount: () => JSON.stringify({ email: inactiveEmail(inactive++ % INACTIVE_ACCOUNTS), password: BENCH_PASSWORD })
  }
  let pending = 0
  if (route === 'login') {
    bodyOf.wrongPassword = () => JSON.stringify({ email: activeEmail(ACTIVE_ACCOUNTS / 2 + (wrong++ % (ACTIVE_ACCOUNTS / 2))), password: WRONG_PASSWORD })
  } else if (route === 'forgot') {
    bodyOf.activeAccount = () => JSON.stringify({ email: activeEmail(active++ % ACTIVE_ACCOUNTS) })
  } else if (route === 'changeEmail') {
    // Each worker asks for a new address each time, then for that same address again while its change is
    // pending (one slot per account: every request ends the pending change), a taken address and its own.
    const last: string[] = []
    const change = (newEmail: string): string => JSON.stringify({ newEmail, password: BENCH_PASSWORD })
    bodyOf.unknownEmail = (worker) => change(last[worker] = `moved-${runId}-${unknown++}@bench.test`)
    bodyOf.pendingAddress = (worker) => change(last[worker]!)
    bodyOf.activeAccount = () => change(activeEmail(active++ % (ACTIVE_ACCOUNTS / 2)))
    bodyOf.ownAddress = (worker) => change(activeEmail(CHANGE_EMAIL_ACCOUNTS + worker))
    delete bodyOf.inactiveAccount
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
  const sizes: Partial<Record<FailureKind, Set<number>>> = Object.fromEntries(KINDS.map((kind) => [kind, new Set()]))
  const statuses: Record<string, number> = {}
  const tokens = route === 'changeEmail' ? await signIn(baseUrl, workers) : []
  // Not timed: each worker's first change, so that its first `pendingAddress` has one to repeat.
  for (const [worker, token] of tokens.entries()) await timedPost(agent, url, bodyOf.unknownEmail!(worker), { authorization: `Bearer ${token}` })
  const started = performance.now()
  const end = started + durationSeconds * 1000
  try {
    await Promise.all(Array.from({ length: workers }, async (_, worker) => {
      const headers: Record<string, string> = tokens[worker] === undefined ? {} : { authorization: `Bearer ${tokens[worker]}` }
      // Every kind once per cycle, in an order shuffled anew each cycle: no kind always follows the same one
      // (what a request leaves to do after its answer, ChangeEmail's message for one, then lands on varying kinds).
      let cycle: FailureKind[] = []
      while (performance.now() < end) {
        if (cycle.length === 0) cycle = shuffled(KINDS)
        const kind = cycle.pop()!
        const { status, ms, bytes } = await timedPost(agent, url, bodyOf[kind]!(worker), headers)
        statuses[status] = (statuses[status] ?? 0) + 1
        if (status === expected) {
          samples[kind]!.push(ms)
          sizes[kind]!.add(bytes)
        }
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
    bytesByKind: Object.fromEntries(KINDS.map((kind) => [kind, [...sizes[kind]!].sort((a, b) => a - b)])),
    medianSpread: (Math.max(...medians) - Math.min(...medians)) / Math.min(...medians)
  }
}

/** ChangeEmail's accounts (1900 …, the upper half, so no taken address the probe names is one of them): worker i signs in as CHANGE_EMAIL_ACCOUNTS + i. */
const CHANGE_EMAIL_ACCOUNTS = 1900

/** Access tokens of sessions of the ChangeEmail accounts, one per worker. */
async function signIn (baseUrl: string, workers: number): Promise<string[]> {
  return await Promise.all(Array.from({ length: workers }, async (_, worker) => {
    const response = await fetch(new URL('/Auth/Login', baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: activeEmail(CHANGE_EMAIL_ACCOUNTS + worker), password: BENCH_PASSWORD })
    })
    if (response.status !== 200) throw new Error(`ChangeEmail probe: login failed: ${response.status} ${await response.text()}`)
    return (await response.json() as { accessToken: string }).accessToken
  }))
}

function shuffled<T> (items: readonly T[]): T[] {
  const copy = [...items]
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j]!, copy[i]!]
  }
  return copy
}
