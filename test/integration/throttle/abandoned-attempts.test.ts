import t from 'tap'
import { MemoryAttemptStore, type AttemptStore } from '../../../lib/index.js'
import { writeAccountsFile } from '../../helpers/accounts-file.js'
import { buildTestApp, CHEAP_ARGON2, EMAIL, PASSWORD } from '../../helpers/app.js'
import { PrivateRedis } from '../../helpers/private-redis.js'
import { post, startServer } from '../../helpers/server-process.js'
import { redisUnavailable } from '../../helpers/services.js'

const WRONG = 'not the password, sorry'
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/**
 * An attempt store behind one connection, as a Redis client sees it: calls run one after another in the
 * order they were made, and while frozen they wait (the caller times out) and run late when thawed.
 */
class OneConnection implements AttemptStore {
  readonly #inner: AttemptStore
  #tail: Promise<unknown> = Promise.resolve()
  #frozen: Promise<void> | undefined
  #thaw: (() => void) | undefined

  constructor (inner: AttemptStore) { this.#inner = inner }

  freeze (): void { this.#frozen = new Promise((resolve) => { this.#thaw = resolve }) }
  thaw (): void { this.#thaw?.(); this.#frozen = undefined }

  async reserve (...args: Parameters<AttemptStore['reserve']>): ReturnType<AttemptStore['reserve']> {
    return await this.#run(async () => await this.#inner.reserve(...args))
  }

  async settle (...args: Parameters<AttemptStore['settle']>): Promise<void> {
    await this.#run(async () => { await this.#inner.settle(...args) })
  }

  async #run<T> (call: () => Promise<T>): Promise<T> {
    const frozen = this.#frozen
    const result = this.#tail.then(async () => { await frozen; return await call() })
    this.#tail = result.catch(() => {})
    return await result
  }
}

t.test('reservations the plugin gave up on are cancelled, so they lock nobody out when the store wakes', async (t) => {
  const attempts = new OneConnection(new MemoryAttemptStore())
  const { login } = await buildTestApp(t, { auth: { attempts, storeTimeout: 200 } })
  attempts.freeze()
  const during = await Promise.all([...Array.from({ length: 5 }, async () => await login(EMAIL, WRONG)), login()])
  t.same(during.map((response) => response.statusCode), [503, 503, 503, 503, 503, 503], 'the store is frozen: 503')
  attempts.thaw()
  // The late reservations run first, then the cancels queued behind them, then this login.
  t.equal((await login()).statusCode, 200, 'the right password logs in at once')
  for (let i = 1; i <= 5; i++) t.equal((await login(EMAIL, WRONG)).statusCode, 401, `failure ${i} counts as usual`)
  t.equal((await login()).statusCode, 429, 'and the sixth attempt is blocked')
})

t.test('an unsettled reservation counts for a lease derived from the options, not a fixed 30 s', async (t) => {
  const { attemptLeaseMs } = await import('../../../lib/password/attempt-lease.js')
  const cheap = { ...CHEAP_ARGON2 }
  const lease = attemptLeaseMs({ storeTimeout: 200, argon2: cheap, hashing: { threads: 1, maxQueue: 4 } })
  t.ok(lease >= 600 && lease < 700, `3 × storeTimeout plus a few cheap hashes: ${lease} ms`)
  const defaults = attemptLeaseMs({ storeTimeout: 2000, argon2: { memoryCost: 19456, timeCost: 2, parallelism: 1 }, hashing: { threads: 2, maxQueue: 64 } })
  t.ok(defaults > 6000 && defaults < 12_000, `defaults: ${defaults} ms`)

  const seen: number[] = []
  const inner = new MemoryAttemptStore()
  const attempts: AttemptStore = {
    reserve: async (key, ticket, policy) => { seen.push(policy.leaseMs); return await inner.reserve(key, ticket, policy) },
    settle: async (...args) => { await inner.settle(...args) }
  }
  const hashing = { threads: 1, maxQueue: 4 }
  const { login } = await buildTestApp(t, { auth: { attempts, storeTimeout: 200, hashing } })
  t.equal((await login()).statusCode, 200)
  t.same(seen, [attemptLeaseMs({ storeTimeout: 200, argon2: cheap, hashing })], 'the store gets that lease')
})

t.test('Redis frozen during logins: after SIGCONT the right password logs in within seconds', { skip: redisUnavailable }, async (t) => {
  const redis = await PrivateRedis.create(t)
  await redis.start()
  const file = await writeAccountsFile(t, [{ email: EMAIL, password: PASSWORD }])
  const server = await startServer(t, { REDIS_URL: redis.url, AUTH_ACCOUNTS_FILE: file, AUTH_RATE_LIMIT: 'off', JWT_SECRET: 's'.repeat(40), LOG_LEVEL: 'fatal' })
  const login = async (password = PASSWORD): Promise<number> =>
    (await post(`${server.url}/Auth/Login`, { email: EMAIL, password }, {})).status
  t.equal(await login(), 200)

  redis.freeze()
  const frozenAt = Date.now()
  const during = await Promise.all([...Array.from({ length: 5 }, async () => await login(WRONG)), login()])
  t.same(during, [503, 503, 503, 503, 503, 503], 'Redis frozen: every login fails closed')
  await sleep(Math.max(0, 5000 - (Date.now() - frozenAt)))
  redis.thaw()

  const thawedAt = Date.now()
  const statuses: number[] = []
  while (Date.now() - thawedAt < 3000) {
    statuses.push(await login())
    if (statuses.at(-1) === 200) break
    await sleep(200)
  }
  t.equal(statuses.at(-1), 200, `the right password logs in within 3 s of SIGCONT (${statuses.join(',')} in ${Date.now() - thawedAt} ms)`)
})
