import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { pbkdf2 } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import Fastify from 'fastify'
import t from 'tap'
import { HashPool } from '../../lib/password/hash-pool.js'
import { HashQueue } from '../../lib/password/hash-queue.js'
import { PasswordHasher } from '../../lib/password/hasher.js'
import { BCRYPT_MODULE } from '../../lib/password/legacy/bcrypt.js'
import { buildTestApp, CHEAP_ARGON2, PLUGIN_TIMEOUT_MS, SECRET } from '../helpers/app.js'
import { holdLibuvThreads } from '../helpers/libuv-holders.js'
import { BCRYPT_2B, DJANGO, PASSWORD, SCRYPT } from '../fixtures/legacy-hashes.js'

const pbkdf2Async = promisify(pbkdf2)
const CRASHING_WORKER = new URL('../fixtures/crashing-hash-worker.js', import.meta.url)
/** The password that ends a thread of CRASHING_WORKER (its module runs in worker threads only). */
const CRASH_PASSWORD = 'crash this thread, please'
/** libuv's thread pool in this process: what the plugin must never fill. */
const UV_THREADS = Number(process.env.UV_THREADPOOL_SIZE) || 4
const tick = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }
const nobody = (i: number): { method: 'POST', url: string, payload: object } =>
  ({ method: 'POST', url: '/Auth/Login', payload: { email: `nobody${i}@example.com`, password: PASSWORD } })

function errorLog (): { lines: string[], log: { error: (details: object, message: string) => void } } {
  const lines: string[] = []
  return { lines, log: { error: (details, message) => { lines.push(JSON.stringify({ details, message })) } } }
}

t.test('threads start as the work needs them, up to `threads`, and close() ends them', async (t) => {
  const { lines, log } = errorLog()
  const pool = new HashPool({ threads: 2, workerData: { params: CHEAP_ARGON2, pepper: undefined, bcryptModule: BCRYPT_MODULE }, log })
  t.teardown(async () => { await pool.close() })
  t.equal(pool.threads, 2)
  t.equal(pool.started, 1, 'one at once, for the dummy hash')
  const hashes = await Promise.all(Array.from({ length: 8 }, async () => await pool.hash('a password')))
  t.equal(new Set(hashes).size, 8, 'each with its own salt')
  t.equal(pool.started, 2, 'a second one for the load, no more')
  t.equal(await pool.verify({ kind: 'verify', format: 'argon2', hash: hashes[0]!, passwords: ['a password'] }), true)
  await pool.close()
  t.equal(pool.started, 0)
  await t.rejects(pool.hash('a password'), { code: 'FST_PWAUTH_UNAVAILABLE', statusCode: 503, retryAfter: 1 }, 'refused once closed')
  t.same(lines, [], 'work refused while closing is not an error')
})

t.test('hashes in flight reach the pool size, never more', async (t) => {
  const { app } = await buildTestApp(t, { auth: { argon2: { memoryCost: 8192, timeCost: 3, parallelism: 1 }, hashing: { threads: 3, maxQueue: 100 } } })
  let done = false
  const logins = Promise.all(Array.from({ length: 12 }, async (_, i) => await app.inject(nobody(i)))).finally(() => { done = true })
  let running = 0
  let inFlight = 0
  // eslint-disable-next-line no-unmodified-loop-condition -- set when the logins are answered
  while (!done) {
    running = Math.max(running, app.passwordAuth.stats().running)
    inFlight = Math.max(inFlight, app.passwordAuth.stats().inFlight)
    await tick()
  }
  t.same((await logins).map((response) => response.statusCode), Array(12).fill(401))
  t.equal(running, 3, 'every thread busy at once')
  t.ok(inFlight > 3, `the others waited (${inFlight} in flight at most)`)
  t.match(app.passwordAuth.stats(), { verifications: 12, running: 0, inFlight: 0, threads: 3 })
})

t.test('libuv\'s thread pool never waits behind hashes: file reads and crypto.pbkdf2 answer while every hashing thread is busy', async (t) => {
  // As many hashing threads as libuv has threads, each running a slow hash: were the hashes on libuv's
  // threads (as before the plugin had threads of its own), nothing else could run there until one ended.
  const slow = { memoryCost: 19456, timeCost: 40, parallelism: 1 }
  const { app } = await buildTestApp(t, { auth: { argon2: slow, hashing: { threads: UV_THREADS, maxQueue: 100 } } })
  // Unknown e-mails: each costs one verification against the dummy hash, made with the slow parameters.
  const logins = Array.from({ length: 2 * UV_THREADS }, async (_, i) => await app.inject(nobody(i)))
  while (app.passwordAuth.stats().running < UV_THREADS) await tick()
  const started = performance.now()
  await Promise.all([
    pbkdf2Async('not a hash', 'salt', 1, 32, 'sha256'),
    readFile(fileURLToPath(import.meta.url)),
    ...Array.from({ length: UV_THREADS }, async () => await pbkdf2Async('one per libuv thread', 'salt', 1, 32, 'sha256'))
  ])
  const waited = performance.now() - started
  t.match(app.passwordAuth.stats(), { verifications: 0, running: UV_THREADS }, `answered in ${waited.toFixed(0)} ms, before any hash had finished`)
  t.same((await Promise.all(logins)).map((response) => response.statusCode), Array(2 * UV_THREADS).fill(401))
})

t.test('legacy hashes verify on the hashing threads, not libuv\'s: with every libuv thread held, bcrypt, scrypt and Django logins answer', async (t) => {
  const { app, accounts, login } = await buildTestApp(t)
  const legacy = { 'bcrypt@example.com': BCRYPT_2B, 'scrypt@example.com': SCRYPT, 'django@example.com': DJANGO }
  for (const [email, passwordHash] of Object.entries(legacy)) accounts.add({ email, passwordHash })
  // Work that needs a libuv thread waits until they are let go, after 20 s at most.
  const holders = holdLibuvThreads(t, UV_THREADS)
  for (const email of Object.keys(legacy)) {
    const response = await login(email, PASSWORD)
    t.equal(response.statusCode, 200, email)
    t.ok(holders.held(), `${email}: answered while libuv's threads were all held`)
  }
  t.match(app.passwordAuth.stats(), { verifications: 3, hashes: 3 }, 'verified, and upgraded to argon2id, on the pool')
  await holders.release()
})

t.test('a hashing thread that dies fails its work with 503, logs no secret, and is replaced', async (t) => {
  const { lines, log } = errorLog()
  const pepper = Buffer.from('the pepper, a secret')
  const hasher = new PasswordHasher({ params: CHEAP_ARGON2, pepper, queue: new HashQueue(1, 4), legacyHashes: [], log, worker: CRASHING_WORKER })
  t.teardown(async () => { await hasher.close() })
  const stored = await hasher.hash('a fine password')
  await t.rejects(hasher.hash(CRASH_PASSWORD), { code: 'FST_PWAUTH_UNAVAILABLE', statusCode: 503, retryAfter: 1 })
  await t.rejects(hasher.check(stored, CRASH_PASSWORD), { code: 'FST_PWAUTH_UNAVAILABLE', statusCode: 503 })
  t.equal(await hasher.verify(stored, 'a fine password'), true, 'a new thread took its place')
  t.match(hasher.stats(), { inFlight: 0, running: 0 })
  t.equal(lines.length, 2)
  t.match(lines[0], /a password-hashing task failed; answered 503/)
  t.match(lines[0], /worker exited with code: 3/)
  t.notMatch(lines.join('\n'), CRASH_PASSWORD)
  t.notMatch(lines.join('\n'), 'the pepper')
})

t.test('hashing threads that cannot start fail the registration clearly', async (t) => {
  const { lines, log } = errorLog()
  const hasher = new PasswordHasher({ params: CHEAP_ARGON2, pepper: undefined, queue: new HashQueue(2, 4), legacyHashes: [], log, worker: new URL('../fixtures/no-such-worker.js', import.meta.url) })
  await t.rejects(hasher.createDummyHash(), { message: 'fastify-password-auth: the password-hashing threads cannot run (see the error logged before this one)' })
  t.match(lines[0], /a password-hashing task failed/)
  await t.rejects(hasher.hash('anything'), { code: 'FST_PWAUTH_UNAVAILABLE', statusCode: 503 }, 'and the pool is closed')
})

t.test('a Login whose verification loses its thread answers 503, counts neither way, and the next one works', async (t) => {
  const pool = await import('../../lib/password/hash-pool.js')
  class CrashingPool extends pool.HashPool {
    constructor (options: ConstructorParameters<typeof pool.HashPool>[0]) { super({ ...options, worker: CRASHING_WORKER }) }
  }
  const plugin = await t.mockImport<typeof import('../../lib/index.js')>('../../dist/lib/index.js', {
    '../../dist/lib/password/hash-pool.js': { ...pool, HashPool: CrashingPool }
  })
  const lines: string[] = []
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS, logger: { level: 'info', stream: { write: (line: string) => { lines.push(line) } } } })
  t.teardown(async () => { await app.close() })
  const accounts = new plugin.MemoryAccountStore()
  accounts.add({ email: 'ada@example.com', passwordHash: await plugin.hashPassword(PASSWORD, CHEAP_ARGON2) })
  await app.register(plugin.default, { accounts, jwt: { secret: SECRET }, argon2: CHEAP_ARGON2, rateLimit: false, throttle: { freeFailures: 1 } })
  const login = async (password: string) => await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: 'ada@example.com', password } })
  const crashed = await login(CRASH_PASSWORD)
  t.equal(crashed.statusCode, 503)
  t.equal(crashed.headers['retry-after'], '1')
  t.equal(crashed.json().code, 'FST_PWAUTH_UNAVAILABLE')
  t.equal((await login('a wrong password')).statusCode, 401, 'the 503 was not counted as a failure (one free failure)')
  t.equal((await login(PASSWORD)).statusCode, 429, 'and the wrong password was')
  t.notMatch(lines.join('\n'), CRASH_PASSWORD, 'the password never reaches the log')
  t.match(lines.join('\n'), /a password-hashing task failed/)
})

t.test('closing while a burst starts threads waits for them to load: ending a loading thread would abort the process', async (t) => {
  const script = fileURLToPath(new URL('../fixtures/close-while-threads-start.js', import.meta.url))
  // Three processes at once: without the wait, each aborted about one run in two (one in four under tap). Without tap's NODE_OPTIONS: its
  // import hooks slow every thread's start, and the abort was then seldom seen.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(node_options$|tap|_tapjs|node_v8_coverage$)/i.test(name)))
  await Promise.all([1, 2, 3].map(async (run) => {
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'ignore'], env })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    // The bound only tells a hang from a slow machine: three runs at once took 25–30 s each beside a CI run, 12 s alone, on a
    // bench machine 2–3.5 × slower than usual (2026-11-29), and over 60 s inside CI's four test files at once.
    const timer = setTimeout(() => { child.kill('SIGKILL') }, 240_000)
    const [code, signal] = await once(child, 'exit') as [number | null, string | null]
    clearTimeout(timer)
    t.same({ code, signal }, { code: 0, signal: null }, `run ${run}: ended by itself, not aborted`)
    t.equal(output.trim(), 'closed 40 pools')
  }))
})

t.test('the process ends by itself once Fastify is closed, its hashing threads gone', async (t) => {
  const script = fileURLToPath(new URL('../fixtures/hash-threads-exit.js', import.meta.url))
  for (const mode of ['close', 'no-close']) {
    const child = spawn(process.execPath, [script, mode], { stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    const timer = setTimeout(() => { child.kill('SIGKILL') }, 120_000)
    const [code, signal] = await once(child, 'exit') as [number | null, string | null]
    clearTimeout(timer)
    t.equal(signal, null, `${mode}: ended by itself, not killed after 120 s`)
    t.equal(code, 0, mode)
    const { before, during, after, peak, statuses } = JSON.parse(output) as { before: number | null, during: number | null, after: number | null, peak: number, statuses: number[] }
    t.equal(peak, 3, `${mode}: three hashes ran at once`)
    t.same(statuses, [401])
    if (before === null || during === null || after === null) continue // thread counts are read from /proc (Linux)
    t.ok(during > before, `${mode}: threads started for the load (${before} → ${during} threads in the process)`)
    if (mode === 'close') t.ok(after < before, `close() ended them all, the one started at registration too (${after} threads)`)
    else t.equal(after, during, 'idle threads, not closed, do not keep the process alive')
  }
})
