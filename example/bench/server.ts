/**
 * The server under test, run as a child process of run.ts. The plugin on the stores BENCH_ACCOUNTS
 * (memory | postgres) and BENCH_SESSIONS (memory | redis) name, or with every store in BENCH_SQL (postgres |
 * sqlite | mysql), the per-IP limit off, 2000 active and
 * 500 inactive accounts sharing one argon2 hash, and beside it the hand-written baselines:
 *
 * - GET /me           guarded by the plugin's `authenticate` (signature, typ/iss/aud/exp, session, account)
 * - GET /plain        `await request.jwtVerify()` of a host-level @fastify/jwt (same secret) and an
 *                     in-memory Set of revoked jtis: the check written by hand
 * - GET /open         no guard at all
 * - POST /hand/login  lookup, argon2 verify, jwt.sign
 * - POST /hand/logout `await request.jwtVerify()`, then the jti into the revoked Set
 *
 * The three GET routes answer the same JSON through the same response schema. Prints
 * `bench server listening on <url>` once it listens; SIGTERM closes it.
 */
import { pathToFileURL } from 'node:url'
import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'
import fastifyJwt from '@fastify/jwt'
import { verify } from '@node-rs/argon2'
import Fastify, { type FastifyInstance } from 'fastify'
import { DEFAULT_ARGON2 } from '../../lib/password/argon2-options.js'
import passwordAuth, { authenticate, hashPassword, type BreachedPasswordsOptions, type PasswordAuthAccount } from '../../lib/index.js'
import { Account } from '../account-schema.js'
import { BENCH_PASSKEYS } from './passkey-authenticator.js'
import { registerHandLogout } from './hand-logout.js'
import { registerProfiler } from './profiler.js'
import { activeEmail, activeId, BENCH_PASSWORD, BENCH_SECRET, BENCH_SESSION_POLICY } from './settings.js'
import { sqlBenchStores, SQL_BENCH_DIALECTS, type SqlDialect } from './sql-stores.js'
import { benchStores, type BenchStoreOptions } from './stores.js'

export type BenchServerOptions = Omit<BenchStoreOptions, 'passwordHash'> & {
  /** The plugin's hashing threads; default the plugin's (one per core). */
  hashThreads?: number
  /** Where POST /bench/profile/stop writes CPU profiles; unset: no profiling routes. */
  profileDir?: string
  /** Sample the hashes running every 10 ms (GET /bench/stats `hashSamples`). */
  sampleHashes?: boolean
  /** A breached-password range service (BENCH_PWNED_RANGE_URL, …_TIMEOUT_MS, …_CACHE_BYTES); unset: none. */
  breachedPasswords?: BreachedPasswordsOptions
  /** Every store in this SQL database instead (BENCH_SQL, BENCH_SQL_LABEL, BENCH_MYSQL_URL): the `sql` section. */
  sql?: { dialect: SqlDialect, label: string, mysqlUrl?: string }
}

/** The JSON every bench route answers: the example's account schema, one compiled serializer for all three. */
const schema = { response: { 200: Account } }

const HandLoginBody = {
  type: 'object',
  properties: { email: { type: 'string', maxLength: 254 }, password: { type: 'string', minLength: 1, maxLength: 1024 } },
  required: ['email', 'password']
} as const
const HandLoginReply = {
  type: 'object',
  properties: { accessToken: { type: 'string' }, tokenType: { type: 'string' }, expiresIn: { type: 'integer' } },
  required: ['accessToken', 'tokenType', 'expiresIn']
} as const

export async function createBenchServer (options: BenchServerOptions): Promise<FastifyInstance> {
  // One hash with the plugin's parameters, shared by every account: start-up stays fast, and each login
  // still pays exactly one full-cost verification.
  const passwordHash = await hashPassword(BENCH_PASSWORD, DEFAULT_ARGON2)
  const stores = options.sql === undefined
    ? await benchStores({ ...options, passwordHash })
    : { ...await sqlBenchStores({ ...options.sql, passwordHash, databaseUrl: options.databaseUrl, poolSize: options.pgPoolSize }), roundTrips: { postgres: {}, redis: {} } }
  const { accounts } = stores

  const app = Fastify({ logger: false })
  app.addHook('onClose', stores.close)
  // The hand-written baseline: the host's own @fastify/jwt with the same HS256 secret, algorithm pinned.
  await app.register(fastifyJwt, { secret: BENCH_SECRET, sign: { expiresIn: 900 }, verify: { algorithms: ['HS256'] } })
  await app.register(passwordAuth, {
    accounts,
    sessions: stores.sessions,
    ...stores.oneTimeTokens === undefined ? {} : { oneTimeTokens: stores.oneTimeTokens },
    ...stores.attempts === undefined ? {} : { attempts: stores.attempts },
    jwt: { secret: BENCH_SECRET },
    argon2: DEFAULT_ARGON2,
    rateLimit: false,
    // ForgotPassword and Register with a mailer that sends nothing: the bench measures the routes, not a mail server.
    passwordReset: true,
    registration: true,
    deliver: () => {},
    // Two factors on, as the example server has them: LoginMfa is measured (accounts without them log in as before).
    mfa: true,
    // Reauthenticate is measured (and the session routes come with it).
    sessionRoutes: true,
    // LoginPasskey is measured (passkey.ts), and ChangeEmail's answers (enumeration.ts).
    passkeys: BENCH_PASSKEYS,
    account: { emailChange: true },
    hashing: options.hashThreads === undefined ? undefined : { threads: options.hashThreads },
    breachedPasswords: options.breachedPasswords
  })

  // /open and /plain answer this account, so all three routes serialise the same shape and size.
  const sample: PasswordAuthAccount = { id: activeId(0), email: activeEmail(0), active: true, credentialVersion: 0 }
  const revoked = new Set<string>()
  app.get('/me', { onRequest: authenticate, schema }, async (request) => request.account)
  app.get('/plain', { schema }, async (request) => {
    await request.jwtVerify()
    if (revoked.has((request.user as { jti: string }).jti)) throw Object.assign(new Error('revoked token'), { statusCode: 401 })
    return sample
  })
  app.get('/open', { schema }, async () => sample)

  // What a careful hand-written login does at least, with none of the plugin's throttling, equal-cost
  // failures, bounded queue or audit events. Its argon2 runs on libuv's pool, as a hand-written login's does.
  let handVerifying = 0
  const verifyByHand = async (hash: string, password: string): Promise<boolean> => {
    handVerifying++
    try {
      return await verify(hash, password)
    } finally {
      handVerifying--
    }
  }
  app.post<{ Body: { email: string, password: string } }>('/hand/login', {
    schema: { body: HandLoginBody, response: { 200: HandLoginReply } }
  }, async (request, reply) => {
    const account = await accounts.findByEmail(request.body.email.trim().toLowerCase())
    if (account === null || !account.active || !await verifyByHand(account.passwordHash, request.body.password.normalize('NFC'))) {
      return await reply.code(401).send({ message: 'invalid credentials' })
    }
    const accessToken = app.jwt.sign({ sub: account.id, jti: randomBytes(16).toString('base64url'), cv: account.credentialVersion })
    return { accessToken, tokenType: 'Bearer', expiresIn: 900 }
  })
  // The logout written by hand: the token verifies and was not revoked yet, then its jti is revoked.
  registerHandLogout(app, revoked)

  // Not measured: the plugin's argon2 counters (verifications, shed), the round trips made so far and the
  // process's memory, read by the bench between runs.
  // The peak resident memory as the process sees it (the bench reads VmHWM from outside too), every 100 ms.
  let peakRss = process.memoryUsage.rss()
  const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage.rss()) }, 100).unref()
  app.addHook('onClose', (_app, done) => { clearInterval(sampler); done() })
  // With BENCH_SAMPLE_HASHES: every 10 ms, the hashes running, the plugin's (on its threads) and the
  // hand-written login's (at most libuv's pool size), summed; the bench divides two readings' difference.
  const hashSamples = { samples: 0, plugin: 0, hand: 0 }
  if (options.sampleHashes === true) {
    const uvThreads = Number(process.env.UV_THREADPOOL_SIZE) || 4
    const hashSampler = setInterval(() => {
      hashSamples.samples++
      hashSamples.plugin += app.passwordAuth.stats().running
      hashSamples.hand += Math.min(handVerifying, uvThreads)
    }, 10).unref()
    app.addHook('onClose', (_app, done) => { clearInterval(hashSampler); done() })
  }
  app.get('/bench/stats', async () => ({ ...app.passwordAuth.stats(), hashSamples, roundTrips: stores.roundTrips, stores: stores.description, memory: process.memoryUsage(), peakRss }))
  if (options.profileDir !== undefined) registerProfiler(app, options.profileDir)
  // Not measured: live sessions for tokens the bench signs itself (one Logout each), as Login would
  // start them, without an argon2 verification per session.
  app.post<{ Body: { count: number } }>('/bench/sessions', async (request) => {
    return await Promise.all(Array.from({ length: request.body.count }, async (_, i) => {
      const session = { id: randomBytes(16).toString('base64url'), accountId: activeId(i), credentialVersion: 0, keyId: '', ip: '', userAgent: '' }
      await stores.sessions.create(session, BENCH_SESSION_POLICY)
      return { sub: session.accountId, sid: session.id }
    }))
  })
  return app
}

/**
 * Linux host tuning: lowers the scheduling priority (nice value) of every thread of this process but the
 * main one, that is the plugin's hashing threads, the libuv thread pool (fs, dns, the hand-written
 * login's argon2) and V8's helper threads. Then the event loop gets a core at once when a request
 * arrives, while argon2 still gets every cycle the loop leaves. Threads started later keep their nice
 * value: call it again once they have started. Returns the number of threads changed.
 */
export function lowerHelperThreadPriority (nice: number): number {
  let changed = 0
  for (const tid of readdirSync('/proc/self/task').map(Number)) {
    if (tid === process.pid) continue
    try {
      setPriority(tid, nice)
      changed++
    } catch {
      // The thread ended meanwhile.
    }
  }
  return changed
}

async function main (): Promise<void> {
  const env = process.env
  const app = await createBenchServer({
    accounts: env.BENCH_ACCOUNTS === 'postgres' ? 'postgres' : 'memory',
    sessions: env.BENCH_SESSIONS === 'redis' ? 'redis' : 'memory',
    redisUrl: env.BENCH_REDIS_URL,
    redisPrefix: env.BENCH_REDIS_PREFIX,
    databaseUrl: env.BENCH_DATABASE_URL,
    pgSchema: env.BENCH_PG_SCHEMA,
    pgPoolSize: env.BENCH_PG_POOL === undefined ? undefined : Number(env.BENCH_PG_POOL),
    pgPreparedStatements: env.BENCH_PG_PREPARED !== 'false',
    sql: (SQL_BENCH_DIALECTS as readonly string[]).includes(env.BENCH_SQL ?? '')
      ? { dialect: env.BENCH_SQL as SqlDialect, label: env.BENCH_SQL_LABEL ?? `fpa_bench_${process.pid}`, mysqlUrl: env.BENCH_MYSQL_URL }
      : undefined,
    hashThreads: env.BENCH_HASH_THREADS === undefined ? undefined : Number(env.BENCH_HASH_THREADS),
    profileDir: env.BENCH_PROFILE_DIR,
    sampleHashes: env.BENCH_SAMPLE_HASHES === '1',
    breachedPasswords: env.BENCH_PWNED_RANGE_URL === undefined
      ? undefined
      : {
          rangeUrl: env.BENCH_PWNED_RANGE_URL,
          timeoutMs: env.BENCH_PWNED_TIMEOUT_MS === undefined ? undefined : Number(env.BENCH_PWNED_TIMEOUT_MS),
          cacheBytes: env.BENCH_PWNED_CACHE_BYTES === undefined ? undefined : Number(env.BENCH_PWNED_CACHE_BYTES)
        }
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  }
  const nice = process.env.BENCH_HELPER_NICE
  if (nice !== undefined && nice !== '' && process.platform === 'linux') {
    // Again every half second: the plugin starts hashing threads as the load needs them.
    lowerHelperThreadPriority(Number(nice))
    setInterval(() => lowerHelperThreadPriority(Number(nice)), 500).unref()
  }
  const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.BENCH_PORT ?? 0) })
  console.log(`bench server listening on ${address}`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(`bench server failed to start: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  })
}
