import t from 'tap'
import { hashPassword, MemoryAccountStore } from '../../lib/index.js'
import { availableParallelism } from 'node:os'
import { HashQueue } from '../../lib/password/hash-queue.js'
import { defaultHashThreads } from '../../lib/password/options.js'
import { needsUpgrade } from '../../lib/password/hasher.js'
import { parseArgon2Hash } from '../../lib/password/legacy/argon2.js'
import { buildTestApp, CHEAP_ARGON2, EMAIL, PASSWORD } from '../helpers/app.js'

t.test('the queue runs at most `concurrency` tasks and lets `maxWaiting` wait, shedding the rest', async (t) => {
  const queue = new HashQueue(2, 3)
  const releases: Array<() => void> = []
  let running = 0
  let peak = 0
  const task = async () => await queue.run(async () => {
    running++
    peak = Math.max(peak, running)
    await new Promise<void>((resolve) => releases.push(resolve))
    running--
    return 'done'
  })
  const accepted = Array.from({ length: 5 }, task)
  await t.rejects(task(), { code: 'FST_PWAUTH_UNAVAILABLE', statusCode: 503, retryAfter: 1 })
  t.equal(queue.size, 5)
  t.equal(queue.running, 2)
  t.equal(queue.shed, 1)
  // eslint-disable-next-line no-unmodified-loop-condition -- the tasks decrement `running` as they finish
  while (releases.length > 0 || running > 0) {
    releases.shift()?.()
    await new Promise((resolve) => setImmediate(resolve))
  }
  t.same(await Promise.all(accepted), ['done', 'done', 'done', 'done', 'done'])
  t.equal(peak, 2)
  t.equal(queue.size, 0)
})

t.test('a failing task frees its slot', async (t) => {
  const queue = new HashQueue(1, 0)
  await t.rejects(queue.run(async () => { throw new Error('boom') }), { message: 'boom' })
  t.equal(await queue.run(async () => 42), 42)
})

t.test('the hashing pool has a thread per core unless configured, and stats() says so', async (t) => {
  t.equal(defaultHashThreads(), availableParallelism())
  const defaults = await buildTestApp(t)
  t.equal(defaults.app.passwordAuth.stats().threads, availableParallelism())
  const three = await buildTestApp(t, { auth: { hashing: { threads: 3 } } })
  t.equal(three.app.passwordAuth.stats().threads, 3)
  t.same(three.app.passwordAuth.stats(), { verifications: 0, hashes: 0, shed: 0, inFlight: 0, running: 0, threads: 3 })
})

t.test('beyond the queue, logins are shed at once with 503 and Retry-After', async (t) => {
  const { app, accounts } = await buildTestApp(t, {
    auth: { argon2: { memoryCost: 8192, timeCost: 2, parallelism: 1 }, hashing: { threads: 1, maxQueue: 2 } }
  })
  const hash = await hashPassword(PASSWORD, { memoryCost: 8192, timeCost: 2 })
  for (let i = 0; i < 20; i++) accounts.add({ email: `user${i}@example.com`, passwordHash: hash })
  const responses = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
    await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: `user${i}@example.com`, password: PASSWORD } })))
  const shed = responses.filter((r) => r.statusCode === 503)
  t.same(new Set(responses.map((r) => r.statusCode)), new Set([200, 503]), 'only 200 and 503')
  t.ok(shed.length >= 15, `${shed.length} shed`)
  t.equal(app.passwordAuth.stats().shed, shed.length)
  for (const response of shed) {
    t.equal(response.headers['retry-after'], '1')
    t.equal(response.json().code, 'FST_PWAUTH_UNAVAILABLE')
  }
  t.equal(app.passwordAuth.stats().inFlight, 0)
})

t.test('shedIfFull refuses only with every slot busy and the wait list full, and never without a wait list', async (t) => {
  const queue = new HashQueue(1, 1)
  const noWaitList = new HashQueue(1, 0)
  const releases: Array<() => void> = []
  const task = async (): Promise<void> => { await new Promise<void>((resolve) => releases.push(resolve)) }
  t.equal(queue.shedIfFull(), false, 'idle')
  const running = [queue.run(task), noWaitList.run(task)]
  t.equal(queue.shedIfFull(), false, 'a place in the wait list is free')
  t.equal(noWaitList.shedIfFull(), false, 'no wait list: the slot may be free by the time the request needs it')
  running.push(queue.run(task))
  t.equal(queue.shedIfFull(), true)
  t.equal(queue.shed, 1, 'counted as shed')
  while (releases.length > 0) { releases.shift()!(); await new Promise((resolve) => setImmediate(resolve)) }
  await Promise.all(running)
  t.equal(queue.shedIfFull(), false)
})

t.test('with the hashing queue full, Login and ChangePassword answer 503 before reading the body, counted nowhere', async (t) => {
  const events: string[] = []
  const { app, login } = await buildTestApp(t, {
    auth: {
      argon2: { memoryCost: 65536, timeCost: 3, parallelism: 1 },
      hashing: { threads: 1, maxQueue: 1 },
      rateLimit: { max: 3, timeWindow: 60_000 },
      onEvent: (event) => { events.push(event.type) }
    }
  })
  // Unknown e-mails: each costs one verification against the dummy hash, made with the slow parameters above.
  const busy = [0, 1].map(async (i) => await login(`nobody${i}@example.com`, PASSWORD))
  while (app.passwordAuth.stats().inFlight < 2) await new Promise((resolve) => setTimeout(resolve, 1))
  const malformed = { headers: { 'content-type': 'application/json' }, payload: '{"email": not json' }
  for (const url of ['/Auth/Login', '/Auth/ChangePassword']) {
    const response = await app.inject({ method: 'POST', url, ...malformed })
    t.equal(response.statusCode, 503, `${url}: shed, where the body would have been a 400`)
    t.equal(response.json().code, 'FST_PWAUTH_UNAVAILABLE')
    t.equal(response.headers['retry-after'], '1')
    t.equal(response.headers['cache-control'], 'no-store')
  }
  t.equal(app.passwordAuth.stats().shed, 2)
  t.same((await Promise.all(busy)).map((response) => response.statusCode), [401, 401])
  t.same(events, ['login.failed', 'login.failed'], 'no event for a shed request')
  t.equal((await login()).statusCode, 200, 'the per-IP limit of 3 counted only the two that ran')
  t.equal((await login()).statusCode, 429)
})

t.test('needsUpgrade compares algorithm, version, memory and time, and upgrades every other format', async (t) => {
  const params = { memoryCost: 19456, timeCost: 2, parallelism: 1 }
  const phc = (head: string) => parseArgon2Hash(`${head}$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNo`)
  t.equal(needsUpgrade(phc('$argon2id$v=19$m=19456,t=2,p=1'), params), false)
  t.equal(needsUpgrade(phc('$argon2id$v=19$m=65536,t=3,p=4'), params), false)
  t.equal(needsUpgrade(phc('$argon2id$v=19$m=4096,t=2,p=1'), params), true)
  t.equal(needsUpgrade(phc('$argon2id$v=19$m=19456,t=1,p=1'), params), true)
  t.equal(needsUpgrade(phc('$argon2i$v=19$m=19456,t=2,p=1'), params), true)
  t.equal(needsUpgrade(phc('$argon2id$v=16$m=19456,t=2,p=1'), params), true)
  t.equal(needsUpgrade(phc('$argon2d$v=19$m=19456,t=2,p=1'), params), true)
  t.equal(needsUpgrade(parseArgon2Hash('$2b$10$notargon'), params), true, 'not argon2')
  t.equal(needsUpgrade(parseArgon2Hash('pbkdf2_sha256$600000$salt$aGFzaA=='), params), true, 'not argon2')
})

t.test('a login re-hashes a weaker hash, keeping sessions and the credential version', async (t) => {
  const { login, accounts, token, me } = await buildTestApp(t)
  const weak = accounts.add({ email: 'old@example.com', passwordHash: await hashPassword(PASSWORD, { memoryCost: 256, timeCost: 1 }) })
  const earlier = await token('old@example.com', PASSWORD)
  const stored = await accounts.findByEmail(weak.email)
  t.match(stored?.passwordHash, /^\$argon2id\$v=19\$m=1024,t=1,p=1\$/, 'upgraded to the configured parameters')
  t.equal(stored?.credentialVersion, 0)
  t.equal((await me(earlier)).statusCode, 200, 'the token issued with the upgrade works')
  t.equal((await login('old@example.com', PASSWORD)).statusCode, 200, 'the new hash verifies')
  const again = await accounts.findByEmail(weak.email)
  t.equal(again?.passwordHash, stored?.passwordHash, 'an up-to-date hash is left alone')
})

t.test('a rehash that loses a race, or fails, never fails the login', async (t) => {
  const inner = new MemoryAccountStore()
  let updates = 0
  let fail = false
  const accounts = {
    findByEmail: inner.findByEmail.bind(inner),
    findById: inner.findById.bind(inner),
    updatePasswordHash: async () => { updates++; if (fail) throw new Error('down'); return false }
  }
  const { login } = await buildTestApp(t, { auth: { accounts } })
  inner.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, { memoryCost: 256, timeCost: 1 }) })
  t.equal((await login()).statusCode, 200, 'compare-and-set lost')
  fail = true
  t.equal((await login()).statusCode, 200, 'store error')
  t.equal(updates, 2)
})

t.test('a pepper is mixed into every hash', async (t) => {
  const pepper = 'pepper-kept-outside-the-database'
  const { accounts, login, changePassword } = await buildTestApp(t, { auth: { argon2: { ...CHEAP_ARGON2, pepper } } })
  accounts.add({ email: 'peppered@example.com', passwordHash: await hashPassword(PASSWORD, { ...CHEAP_ARGON2, pepper: Buffer.from(pepper) }) })
  t.equal((await login('peppered@example.com', PASSWORD)).statusCode, 200)
  t.equal((await login(EMAIL, PASSWORD)).statusCode, 401, 'a hash made without the pepper does not verify')

  const unpeppered = await buildTestApp(t)
  unpeppered.accounts.add({ email: 'peppered@example.com', passwordHash: (await accounts.findByEmail('peppered@example.com'))!.passwordHash })
  t.equal((await unpeppered.login('peppered@example.com', PASSWORD)).statusCode, 401, 'and a peppered hash needs the pepper')
  t.equal((await changePassword({ email: 'peppered@example.com', currentPassword: PASSWORD, newPassword: 'a fresh and spicy passphrase', confirmNewPassword: 'a fresh and spicy passphrase' })).statusCode, 204)
  t.equal((await login('peppered@example.com', 'a fresh and spicy passphrase')).statusCode, 200)
})

t.test('hashPassword refuses what the routes would refuse', async (t) => {
  await t.rejects(hashPassword(''), TypeError)
  await t.rejects(hashPassword('lone \uD800 surrogate'), TypeError)
  await t.rejects(hashPassword(42 as unknown as string), TypeError)
  t.match(await hashPassword('fine', CHEAP_ARGON2), /^\$argon2id\$v=19\$m=1024,t=1,p=1\$/)
  t.match(await hashPassword('fine'), /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/, 'defaults to the OWASP minimum')
})

t.test('hashPassword takes the plugin\'s argon2 option: a string pepper works as the plugin\'s does', async (t) => {
  const argon2 = { ...CHEAP_ARGON2, pepper: 'pepper-kept-outside-the-database' }
  const { accounts, login } = await buildTestApp(t, { auth: { argon2 } })
  accounts.add({ email: 'peppered@example.com', passwordHash: await hashPassword(PASSWORD, argon2) })
  t.equal((await login('peppered@example.com', PASSWORD)).statusCode, 200, 'the very object given to the plugin')
})

t.test('hashPassword checks its options as the plugin does, with the same coded errors', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ pepper: '' }, 'argon2.pepper must not be empty'],
    [{ pepper: 42 }, 'argon2.pepper must be a string or a Uint8Array'],
    [{ memoryCost: 4 }, 'argon2.memoryCost must be KiB from 8 × parallelism to 4194304'],
    [{ timeCost: 0 }, 'argon2.timeCost must be a whole number from 1 to 100'],
    [{ memory: 1024 }, 'unknown option argon2.memory: did you mean argon2.memoryCost?'],
    ['cheap', 'argon2 must be an object']
  ]
  for (const [argon2, message] of cases) {
    await t.rejects(hashPassword('fine', argon2 as never), { code: 'FST_PWAUTH_INVALID_OPTION', message: `fastify-password-auth: ${message}` }, message)
  }
})
