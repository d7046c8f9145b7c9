/**
 * What a failed login's latency tells about an account whose hash came from another system. One server
 * (plugin defaults, memory stores) and this client in one process, one request at a time over one
 * keep-alive connection, every kind in turn, wrong passwords throughout:
 *
 *   unknown e-mail      one argon2id verification against the dummy hash
 *   argon2id account    one argon2id verification (the default parameters)
 *   bcrypt, cost 10     one bcrypt verification
 *   scrypt, N=2^14      one scrypt derivation (r=8, p=1)
 *   Django, 600 000     one PBKDF2-SHA256 derivation
 *   retired hash        a legacy hash replaced by a marker in no known format: the dummy verification
 *
 * Run after `npm run build`: `node dist/example/bench/legacy-timing.js` (LEGACY_BENCH_ROUNDS, default 40).
 */
import { pbkdf2, randomBytes, scrypt } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { Agent } from 'node:http'
import { availableParallelism, cpus } from 'node:os'
import { promisify } from 'node:util'
import { hash as bcryptHash } from '@node-rs/bcrypt'
import Fastify from 'fastify'
import { DEFAULT_ARGON2 } from '../../lib/password/argon2-options.js'
import passwordAuth, { hashPassword, MemoryAccountStore } from '../../lib/index.js'
import { BENCH_PASSWORD, BENCH_SECRET, WRONG_PASSWORD } from './settings.js'
import { timedPost } from './timed-post.js'

const KINDS = ['unknown e-mail', 'argon2id account', 'bcrypt, cost 10', 'scrypt, N=2^14', 'Django, 600 000', 'retired hash'] as const
type Kind = typeof KINDS[number]
const ROUNDS = Number(process.env.LEGACY_BENCH_ROUNDS) > 0 ? Number(process.env.LEGACY_BENCH_ROUNDS) : 40
const WARM_UP = 3

const b64 = (bytes: Buffer): string => bytes.toString('base64').replace(/=+$/, '')

async function legacyHashes (): Promise<Record<Exclude<Kind, 'unknown e-mail'>, string>> {
  const salt = randomBytes(16)
  const scryptKey = await (promisify(scrypt) as (p: string, s: Buffer, n: number, o: object) => Promise<Buffer>)(BENCH_PASSWORD, salt, 32, { N: 2 ** 14, r: 8, p: 1 })
  const djangoSalt = randomBytes(9).toString('base64url')
  const djangoKey = await promisify(pbkdf2)(BENCH_PASSWORD, djangoSalt, 600_000, 32, 'sha256')
  return {
    'argon2id account': await hashPassword(BENCH_PASSWORD, DEFAULT_ARGON2),
    'bcrypt, cost 10': await bcryptHash(BENCH_PASSWORD, 10),
    'scrypt, N=2^14': `$scrypt$ln=14,r=8,p=1$${b64(salt)}$${b64(scryptKey)}`,
    'Django, 600 000': `pbkdf2_sha256$600000$${djangoSalt}$${djangoKey.toString('base64')}`,
    'retired hash': '!reset-required'
  }
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

async function main (): Promise<void> {
  const accounts = new MemoryAccountStore()
  const emailOf = (kind: Kind): string => `${kind.replace(/[^a-z0-9]+/g, '-')}@bench.test`
  for (const [kind, passwordHash] of Object.entries(await legacyHashes())) accounts.add({ email: emailOf(kind as Kind), passwordHash })

  const app = Fastify({ logger: false })
  await app.register(passwordAuth, {
    accounts,
    jwt: { secret: BENCH_SECRET },
    argon2: DEFAULT_ARGON2,
    rateLimit: false,
    // Wrong passwords only: the per-e-mail block would answer 429 without any verification.
    throttle: { freeFailures: 1000 }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/Auth/Login`)
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const samples = Object.fromEntries(KINDS.map((kind) => [kind, [] as number[]])) as Record<Kind, number[]>
  try {
    for (let round = 0; round < WARM_UP + ROUNDS; round++) {
      for (const kind of KINDS) {
        const email = kind === 'unknown e-mail' ? `nobody-${round}@bench.test` : emailOf(kind)
        const { status, ms } = await timedPost(agent, url, JSON.stringify({ email, password: WRONG_PASSWORD }))
        if (status !== 401) throw new Error(`${kind}: expected 401, got ${status}`)
        if (round >= WARM_UP) samples[kind].push(ms)
      }
    }
  } finally {
    agent.destroy()
    await app.close()
  }

  console.log(`Failed logins, ${ROUNDS} per kind, one at a time; ${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, Node ${process.version}`)
  console.log('| Account | p10 ms | median ms | p90 ms | median − unknown e-mail |')
  console.log('|---|---:|---:|---:|---:|')
  const sorted = Object.fromEntries(KINDS.map((kind) => [kind, [...samples[kind]].sort((a, b) => a - b)])) as Record<Kind, number[]>
  const baseline = quantile(sorted['unknown e-mail'], 0.5)
  for (const kind of KINDS) {
    const median = quantile(sorted[kind], 0.5)
    const delta = median - baseline
    console.log(`| ${kind} | ${quantile(sorted[kind], 0.1).toFixed(1)} | ${median.toFixed(1)} | ${quantile(sorted[kind], 0.9).toFixed(1)} | ${delta >= 0 ? '+' : '−'}${Math.abs(delta).toFixed(1)} ms |`)
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
