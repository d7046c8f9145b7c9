/**
 * The `passkey` section: a passkey sign-in (POST /Auth/Passkeys/LoginOptions, then POST /Auth/LoginPasskey
 * with an assertion over that challenge) against Refresh, alternating on the same connections. Neither
 * runs argon2; a sign-in should cost about a Refresh plus one ES256 verification, which is measured too,
 * in this process, as the plugin makes it (verifyAssertion) and raw (node:crypto).
 *
 * Every LoginPasskey needs a fresh challenge and an assertion signed over it with a counter above the
 * last one, so each round runs in three timed steps with the signing between them, outside the windows:
 * LoginOptions (its challenges collected per connection), then LoginPasskey (each connection signs for
 * its own passkeys, in order), then Refresh with the refresh tokens those sign-ins returned. A sign-in's
 * rate and server CPU are those of its two requests together.
 */
import { generateKeyPairSync, sign, verify } from 'node:crypto'
import { verifyAssertion } from '../../lib/passkeys/webauthn.js'
import { load, type LoadResult } from './load.js'
import { fourAtATime, loadRefreshes, postJson } from './login-mfa.js'
import { BENCH_PASSKEYS, BenchPasskey } from './passkey-authenticator.js'
import { log, type Server } from './scenarios.js'
import { activeEmail, BENCH_PASSWORD } from './settings.js'

/** Sign-ins per round (and as many Refreshes): a few seconds of each at this machine's rates. */
const SIGN_INS = 1280
const CONNECTIONS = 16
/** Accounts with a passkey each (1400 …, apart from the other sections' ones); each connection signs in with 4 of them in turn. */
const PASSKEYS = 64
const FIRST_ACCOUNT = 1400
/** In-process verifications timed for the reference cost, after as many untimed (the first ones load the library and warm the JIT). */
const VERIFICATIONS = 400

export interface PasskeyRound {
  options: LoadResult
  loginPasskey: LoadResult
  refresh: LoadResult
  /** Successful LoginPasskey answers over the time of both runs. */
  signInsPerSecond: number
  /** Server CPU of both runs per sign-in, in µs. */
  signInCpuMicros?: number
}

export interface PasskeyResult {
  passkeys: number
  rounds: PasskeyRound[]
  /** One assertion checked as the plugin checks it (@simplewebauthn/server), and one raw ES256 verify, in µs of CPU, in the bench's process. */
  verificationCpuMicros: { plugin: number, raw: number }
}

/** The accounts' passkeys, enrolled through the routes: Login, RegisterOptions, POST /Auth/Passkeys (with the password). */
async function enrol (server: Server): Promise<BenchPasskey[]> {
  return await fourAtATime(Array.from({ length: PASSKEYS }, (_, i) => activeEmail(FIRST_ACCOUNT + i)), async (email) => {
    const { accessToken } = await postJson(server, '/Auth/Login', { email, password: BENCH_PASSWORD })
    const options = await postJson(server, '/Auth/Passkeys/RegisterOptions', {}, accessToken)
    const passkey = new BenchPasskey()
    await postJson(server, '/Auth/Passkeys', { ...passkey.create(options as { challenge: string, user: { id: string } }), password: BENCH_PASSWORD }, accessToken)
    return passkey
  })
}

/** CPU time of `job` run `n` times one after the other, per run, in µs. */
async function cpuPerRun (n: number, job: (i: number) => unknown): Promise<number> {
  const before = process.cpuUsage()
  for (let i = 0; i < n; i++) await job(i)
  const { user, system } = process.cpuUsage(before)
  return (user + system) / n
}

/** What one ES256 verification costs in this process: as the plugin runs it, and raw. */
async function verificationCost (): Promise<PasskeyResult['verificationCpuMicros']> {
  const passkey = new BenchPasskey()
  passkey.create({ challenge: 'AAAA', user: { id: 'AAAA' } })
  const challenge = Buffer.alloc(32, 7).toString('base64url')
  const assertions = Array.from({ length: VERIFICATIONS }, () => (passkey.get(challenge) as { response: { id: string } }).response)
  const rp = { id: BENCH_PASSKEYS.rpId, name: BENCH_PASSKEYS.rpName, origins: BENCH_PASSKEYS.origins }
  for (const assertion of assertions) {
    if (await verifyAssertion(assertion, challenge, true, passkey.publicKey, rp) === null) throw new Error('the reference assertion does not verify')
  }
  const plugin = await cpuPerRun(VERIFICATIONS, async (i) => await verifyAssertion(assertions[i]!, challenge, true, passkey.publicKey, rp))
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const data = Buffer.alloc(69, 1)
  const signature = sign('sha256', data, privateKey)
  for (let i = 0; i < VERIFICATIONS; i++) verify('sha256', data, publicKey, signature)
  const raw = await cpuPerRun(VERIFICATIONS, () => verify('sha256', data, publicKey, signature))
  return { plugin, raw }
}

/** One round: SIGN_INS passkey sign-ins, then as many Refreshes of the sessions they started, on the same connections. */
async function passkeyRound (server: Server, passkeys: BenchPasskey[], round: number): Promise<PasskeyRound> {
  const perConnection = SIGN_INS / CONNECTIONS
  const challenges: string[][] = Array.from({ length: CONNECTIONS }, () => [])
  const options = await load({
    url: server.url,
    path: '/Auth/Passkeys/LoginOptions',
    method: 'POST',
    connections: CONNECTIONS,
    durationSeconds: 60,
    amount: SIGN_INS,
    connectionRequests: (connection) => Array.from({ length: perConnection }, () => ({
      onResponse: (status: number, text: string) => { if (status === 200) challenges[connection]!.push((JSON.parse(text) as { challenge: string }).challenge) }
    })),
    serverPid: server.pid,
    profile: `passkey-options-${round}`
  })
  // Not timed: each connection signs for its own passkeys in turn, so every counter grows in the order the server sees.
  const mine = PASSKEYS / CONNECTIONS
  const bodies = challenges.map((list, connection) => list.map((challenge, i) => JSON.stringify(passkeys[connection * mine + (i % mine)]!.get(challenge))))
  const refreshTokens: string[] = []
  const loginPasskey = await load({
    url: server.url,
    path: '/Auth/LoginPasskey',
    method: 'POST',
    connections: CONNECTIONS,
    durationSeconds: 60,
    amount: SIGN_INS,
    headers: { 'content-type': 'application/json' },
    connectionRequests: (connection) => bodies[connection]!.map((body) => ({
      body,
      onResponse: (status: number, text: string) => { if (status === 200) refreshTokens.push((JSON.parse(text) as { refreshToken: string }).refreshToken) }
    })),
    serverPid: server.pid,
    profile: `passkey-login-${round}`
  })
  const refresh = await loadRefreshes(server, refreshTokens, `passkey-refresh-${round}`)
  const signInsPerSecond = loginPasskey.okPerSecond * loginPasskey.durationSeconds / (options.durationSeconds + loginPasskey.durationSeconds)
  const signInCpuMicros = options.serverCpuMicrosPerResponse === undefined || loginPasskey.serverCpuMicrosPerResponse === undefined
    ? undefined
    : options.serverCpuMicrosPerResponse + loginPasskey.serverCpuMicrosPerResponse
  log(`round ${round}: passkey sign-ins ${signInsPerSecond.toFixed(0)}/s (LoginOptions ${JSON.stringify(options.statuses)}, LoginPasskey ${JSON.stringify(loginPasskey.statuses)}), ` +
    `Refresh ${refresh.okPerSecond.toFixed(0)}/s (${JSON.stringify(refresh.statuses)})`)
  return { options, loginPasskey, refresh, signInsPerSecond, signInCpuMicros }
}

/** Enrols the passkeys, measures the verification's own cost, then a warm-up round and `rounds` measured. */
export async function passkeySection (server: Server, rounds: number): Promise<PasskeyResult> {
  log(`passkeys: enrolling ${PASSKEYS} through the routes`)
  const passkeys = await enrol(server)
  const verificationCpuMicros = await verificationCost()
  log(`one ES256 verification in this process: ${verificationCpuMicros.plugin.toFixed(0)} µs as the plugin makes it, ${verificationCpuMicros.raw.toFixed(0)} µs raw`)
  await passkeyRound(server, passkeys, 0) // warm-up, not counted
  const measured: PasskeyRound[] = []
  for (let round = 1; round <= rounds; round++) measured.push(await passkeyRound(server, passkeys, round))
  return { passkeys: PASSKEYS, rounds: measured, verificationCpuMicros }
}
