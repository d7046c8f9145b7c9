import { generateSync } from 'otplib'
import { load, type LoadResult } from './load.js'
import { log, type Server } from './scenarios.js'
import { activeEmail, BENCH_PASSWORD } from './settings.js'

/** Second-factor logins per round: ten recovery codes on each of CHALLENGES / 10 accounts. */
const CHALLENGES = 640
const CONNECTIONS = 16
/** Accounts of the first round (1000 …): far from those the other sections log in with. */
const FIRST_ACCOUNT = 1000

export interface LoginMfaPair {
  loginMfa: LoadResult
  refresh: LoadResult
}

/** One preparing request; a 503 (the hashing queue of an earlier section's flood still draining) is retried. */
export async function postJson (server: Server, path: string, body: object, token?: string): Promise<Record<string, any>> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...token === undefined ? {} : { authorization: `Bearer ${token}` } },
      body: JSON.stringify(body)
    })
    if (response.ok) return await response.json() as Record<string, any>
    if (response.status !== 503 || attempt === 40) throw new Error(`${path} failed: ${response.status} ${await response.text()}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** Runs `job` over `items`, four at a time (argon2 bound: the logins). */
export async function fourAtATime<T, R> (items: T[], job: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = []
  for (let i = 0; i < items.length; i += 4) results.push(...await Promise.all(items.slice(i, i + 4).map(job)))
  return results
}

/** An account with two factors on: its email and ten recovery codes. */
async function withTwoFactors (server: Server, email: string): Promise<{ email: string, codes: string[] }> {
  const { accessToken } = await postJson(server, '/Auth/Login', { email, password: BENCH_PASSWORD })
  const { secret } = await postJson(server, '/Auth/Mfa/Setup', {}, accessToken)
  const code = generateSync({ secret, epoch: Math.floor(Date.now() / 1000) })
  const { recoveryCodes } = await postJson(server, '/Auth/Mfa/Confirm', { code, password: BENCH_PASSWORD }, accessToken)
  return { email, codes: recoveryCodes }
}

/**
 * One round of LoginMfa against its baseline, Refresh (neither runs argon2; both verify a token, read and
 * write the stores and sign an access token): CHALLENGES second-factor logins with recovery codes, prepared
 * by real Logins, then as many Refreshes with the refresh tokens those logins returned, on the same connections.
 */
export async function loginMfaRound (server: Server, round: number): Promise<LoginMfaPair> {
  const first = FIRST_ACCOUNT + round * (CHALLENGES / 10)
  const accounts = await fourAtATime(Array.from({ length: CHALLENGES / 10 }, (_, i) => activeEmail(first + i)), async (email) => await withTwoFactors(server, email))
  const pairs = accounts.flatMap(({ email, codes }) => codes.map((code) => ({ email, code })))
  const bodies = await fourAtATime(pairs, async ({ email, code }) => {
    const { mfaToken } = await postJson(server, '/Auth/Login', { email, password: BENCH_PASSWORD })
    return { mfaToken, code }
  })
  const refreshTokens: string[] = []
  const perConnection = CHALLENGES / CONNECTIONS
  const loginMfa = await load({
    url: server.url,
    path: '/Auth/LoginMfa',
    method: 'POST',
    connections: CONNECTIONS,
    durationSeconds: 60,
    amount: CHALLENGES,
    headers: { 'content-type': 'application/json' },
    connectionRequests: (connection) => bodies.slice(connection * perConnection, (connection + 1) * perConnection).map((body) => ({
      body: JSON.stringify(body),
      onResponse: (status: number, text: string) => { if (status === 200) refreshTokens.push((JSON.parse(text) as { refreshToken: string }).refreshToken) }
    })),
    serverPid: server.pid
  })
  const refresh = await loadRefreshes(server, refreshTokens)
  log(`round ${round}: LoginMfa ${loginMfa.okPerSecond.toFixed(0)}/s (${JSON.stringify(loginMfa.statuses)}), Refresh ${refresh.okPerSecond.toFixed(0)}/s (${JSON.stringify(refresh.statuses)})`)
  return { loginMfa, refresh }
}

/** The baseline of the token-only sections: one Refresh per token, spread over the same connections as the measured route. */
export async function loadRefreshes (server: Server, refreshTokens: string[], profile?: string): Promise<LoadResult> {
  return await load({
    url: server.url,
    path: '/Auth/Refresh',
    method: 'POST',
    connections: CONNECTIONS,
    durationSeconds: 60,
    amount: refreshTokens.length,
    headers: { 'content-type': 'application/json' },
    connectionRequests: (connection) => refreshTokens.filter((_, i) => i % CONNECTIONS === connection).map((refreshToken) => ({ body: JSON.stringify({ refreshToken }) })),
    serverPid: server.pid,
    profile
  })
}
