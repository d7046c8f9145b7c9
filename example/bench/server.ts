/**
 * The server under test, run as a child process of run.ts. The plugin on memory stores (or Redis
 * revocations), the per-IP limit off, 2000 active and 500 inactive accounts sharing one argon2 hash,
 * and three routes that answer the same JSON through the same response schema:
 *
 * - GET /me     guarded by the plugin's `authenticate` (signature, typ/iss/aud/exp, revocation, account)
 * - GET /plain  guarded only by `await request.jwtVerify()` of a host-level @fastify/jwt (same secret)
 * - GET /open   no guard at all
 *
 * Prints `bench server listening on <url>` once it listens; SIGTERM closes it.
 */
import { pathToFileURL } from 'node:url'
import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'
import fastifyJwt from '@fastify/jwt'
import { verify } from '@node-rs/argon2'
import Fastify, { type FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import passwordAuth, {
  DEFAULT_ARGON2, hashPassword, MemoryAccountStore, MemoryRevocationStore, type PasswordAuthAccount, type RevocationStore
} from '../../lib/index.js'
import { RedisRevocationStore } from '../../lib/redis.js'
import { ACTIVE_ACCOUNTS, activeEmail, activeId, BENCH_PASSWORD, BENCH_SECRET, INACTIVE_ACCOUNTS, inactiveEmail } from './settings.js'

export interface BenchServerOptions {
  /** Where revocations live: process memory, or Redis under `redisPrefix`. */
  revocations: 'memory' | 'redis'
  redisUrl?: string
  redisPrefix?: string
  activeAccounts?: number
  inactiveAccounts?: number
  /** argon2 operations at once; default the plugin's (cores, at most the thread pool size − 1). */
  hashConcurrency?: number
}

/** The JSON every bench route answers, serialised by the same compiled schema. */
const AccountReply = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    active: { type: 'boolean' },
    credentialVersion: { type: 'integer' }
  },
  required: ['id', 'email', 'active', 'credentialVersion'],
  additionalProperties: false
} as const
const schema = { response: { 200: AccountReply } }

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

async function revocationStore (options: BenchServerOptions): Promise<{ store: RevocationStore, close: () => Promise<void> }> {
  if (options.revocations === 'memory') return { store: new MemoryRevocationStore(), close: async () => {} }
  // An address, not `localhost`: a name lookup would go through the libuv thread pool argon2 keeps busy.
  const client = new Redis(options.redisUrl ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1, enableAutoPipelining: true })
  await client.ping()
  return {
    store: new RedisRevocationStore({ client, prefix: options.redisPrefix ?? `fastify-password-auth-bench:${process.pid}:revoked:` }),
    close: async () => { await client.quit() }
  }
}

export async function createBenchServer (options: BenchServerOptions): Promise<FastifyInstance> {
  const { activeAccounts = ACTIVE_ACCOUNTS, inactiveAccounts = INACTIVE_ACCOUNTS } = options
  // One hash with the plugin's parameters, shared by every account: start-up stays fast, and each login
  // still pays exactly one full-cost verification.
  const passwordHash = await hashPassword(BENCH_PASSWORD, DEFAULT_ARGON2)
  const accounts = new MemoryAccountStore()
  for (let i = 0; i < activeAccounts; i++) accounts.add({ id: activeId(i), email: activeEmail(i), passwordHash })
  for (let i = 0; i < inactiveAccounts; i++) accounts.add({ id: `i${i}`, email: inactiveEmail(i), passwordHash, active: false })
  const revocations = await revocationStore(options)

  const app = Fastify({ logger: false })
  app.addHook('onClose', revocations.close)
  // The hand-written baseline: the host's own @fastify/jwt with the same HS256 secret, algorithm pinned.
  // Registered before the plugin, which keeps its own instance under a namespace.
  await app.register(fastifyJwt, { secret: BENCH_SECRET, sign: { expiresIn: 900 }, verify: { algorithms: ['HS256'] } })
  await app.register(passwordAuth, {
    accounts,
    revocations: revocations.store,
    jwt: { secret: BENCH_SECRET },
    argon2: DEFAULT_ARGON2,
    rateLimit: false,
    hashing: options.hashConcurrency === undefined ? undefined : { concurrency: options.hashConcurrency }
  })

  // /open and /plain answer this account, so all three routes serialise the same shape and size.
  const sample: PasswordAuthAccount = { id: activeId(0), email: activeEmail(0), active: true, credentialVersion: 0 }
  app.get('/me', { onRequest: app.authenticate, schema }, async (request) => request.account)
  app.get('/plain', { schema }, async (request) => {
    await request.jwtVerify()
    return sample
  })
  app.get('/open', { schema }, async () => sample)

  // What a careful hand-written login does at least, with none of the plugin's throttling, equal-cost
  // failures, bounded queue or audit events.
  app.post<{ Body: { email: string, password: string } }>('/hand/login', {
    schema: { body: HandLoginBody, response: { 200: HandLoginReply } }
  }, async (request, reply) => {
    const account = await accounts.findByEmail(request.body.email.trim().toLowerCase())
    if (account === null || !account.active || !await verify(account.passwordHash, request.body.password.normalize('NFC'))) {
      return await reply.code(401).send({ message: 'invalid credentials' })
    }
    const accessToken = app.jwt.sign({ sub: account.id, jti: randomBytes(16).toString('base64url'), cv: account.credentialVersion })
    return { accessToken, tokenType: 'Bearer', expiresIn: 900 }
  })
  // Not measured: lets the bench read the plugin's argon2 counters (verifications, shed) after a run.
  app.get('/bench/stats', async () => app.passwordAuth.stats())
  return app
}

/**
 * Linux host tuning: lowers the scheduling priority (nice value) of every thread of this process but the
 * main one, that is the libuv thread pool (argon2, fs, dns) and V8's helper threads. Then the event loop
 * gets a core at once when a request arrives, while argon2 still gets every cycle the loop leaves. Call it
 * after the thread pool has started (the first hash starts it). Returns the number of threads changed.
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
  const app = await createBenchServer({
    revocations: process.env.BENCH_REVOCATIONS === 'redis' ? 'redis' : 'memory',
    redisUrl: process.env.BENCH_REDIS_URL,
    redisPrefix: process.env.BENCH_REDIS_PREFIX,
    hashConcurrency: process.env.BENCH_HASH_CONCURRENCY === undefined ? undefined : Number(process.env.BENCH_HASH_CONCURRENCY)
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  }
  const nice = process.env.BENCH_HELPER_NICE
  if (nice !== undefined && nice !== '' && process.platform === 'linux') lowerHelperThreadPriority(Number(nice))
  const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.BENCH_PORT ?? 0) })
  console.log(`bench server listening on ${address}`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(`bench server failed to start: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  })
}
