import t from 'tap'
import { hashPassword } from '../../lib/index.js'
import { blockDuration } from '../../lib/stores/attempt-rules.js'
import { buildTestApp, changeBody, CHEAP_ARGON2, EMAIL, PASSWORD } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

const WRONG = 'not the password, sorry'
const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

t.test('five failures are free, then the e-mail is blocked with 429 and Retry-After', async (t) => {
  const { login, app } = await buildTestApp(t)
  for (let i = 1; i <= 5; i++) t.equal((await login(EMAIL, WRONG)).statusCode, 401, `failure ${i}`)
  const blocked = await login(EMAIL, WRONG)
  expectProblem(t, blocked, 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS')
  t.equal(blocked.headers['retry-after'], '30')

  const verifications = app.passwordAuth.stats().verifications
  const right = await login(EMAIL, PASSWORD)
  t.equal(right.statusCode, 429, 'even the right password is refused while blocked')
  t.equal(app.passwordAuth.stats().verifications, verifications, 'and never verified')
})

t.test('unknown e-mails are counted exactly like known ones', async (t) => {
  const { login } = await buildTestApp(t)
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 7; i++) {
    known.push((await login(EMAIL, WRONG)).statusCode)
    unknown.push((await login('nobody@example.com', WRONG)).statusCode)
  }
  t.same(unknown, known)
  t.same(known, [401, 401, 401, 401, 401, 429, 429])
})

t.test('addresses are counted after normalisation', async (t) => {
  const { login } = await buildTestApp(t)
  for (const variant of ['ada@example.com', 'ADA@example.com', ' Ada@Example.com', 'ada@EXAMPLE.COM ', 'aDa@example.com']) {
    t.equal((await login(variant, WRONG)).statusCode, 401)
  }
  t.equal((await login(EMAIL, PASSWORD)).statusCode, 429)
})

t.test('a success resets the count', async (t) => {
  const { login } = await buildTestApp(t)
  for (let i = 0; i < 4; i++) await login(EMAIL, WRONG)
  t.equal((await login()).statusCode, 200)
  for (let i = 1; i <= 5; i++) t.equal((await login(EMAIL, WRONG)).statusCode, 401, `failure ${i} after the reset`)
  t.equal((await login(EMAIL, WRONG)).statusCode, 429)
})

t.test('one e-mail being blocked does not block another', async (t) => {
  const { login, accounts } = await buildTestApp(t)
  accounts.add({ email: 'bob@example.com', passwordHash: await hashPassword('bob has a long passphrase', CHEAP_ARGON2) })
  for (let i = 0; i < 6; i++) await login(EMAIL, WRONG)
  t.equal((await login(EMAIL, PASSWORD)).statusCode, 429)
  t.equal((await login('bob@example.com', 'bob has a long passphrase')).statusCode, 200)
})

t.test('Login and ChangePassword share the counters', async (t) => {
  const { login, changePassword, app } = await buildTestApp(t)
  for (let i = 0; i < 3; i++) t.equal((await login(EMAIL, WRONG)).statusCode, 401)
  for (let i = 0; i < 2; i++) t.equal((await changePassword(changeBody({ currentPassword: WRONG }))).statusCode, 401)
  t.equal((await login()).statusCode, 429, 'login blocked by change failures')
  const change = await changePassword(changeBody())
  t.equal(change.statusCode, 429, 'change blocked too')
  t.equal(change.headers['retry-after'], '30')
  t.equal((await changePassword(changeBody({ confirmNewPassword: 'different' }))).statusCode, 400, 'input errors come before the throttle')
  t.equal(app.passwordAuth.stats().verifications, 5)
})

t.test('the block doubles with each further failure', async (t) => {
  const { login } = await buildTestApp(t, { auth: { throttle: { blockSeconds: 1, maxBlockSeconds: 4 } } })
  for (let i = 0; i < 5; i++) await login(EMAIL, WRONG)
  t.equal((await login(EMAIL, WRONG)).headers['retry-after'], '1')
  await sleep(1100)
  t.equal((await login(EMAIL, WRONG)).statusCode, 401, 'one attempt after the block ends')
  const second = await login(EMAIL, PASSWORD)
  t.equal(second.statusCode, 429)
  t.equal(second.headers['retry-after'], '2')
  await sleep(2100)
  t.equal((await login()).statusCode, 200, 'the right password after the block ends')
  t.equal((await login(EMAIL, WRONG)).statusCode, 401, 'and the count starts again')
})

t.test('block durations: 30 s after the fifth failure, doubling up to 15 minutes', async (t) => {
  const policy = { freeFailures: 5, blockMs: 30_000, maxBlockMs: 900_000, leaseMs: 30_000, forgetAfterMs: 86_400_000 }
  t.same([1, 4, 5, 6, 7, 8, 9, 10, 11, 50, 5000].map((failures) => blockDuration(failures, policy)),
    [0, 0, 30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000, 900_000, 900_000])
})

t.test('200 parallel wrong guesses get at most 5 verifications', async (t) => {
  const { login, app } = await buildTestApp(t, { auth: { hashing: { threads: 1, maxQueue: 1000 } } })
  const responses = await Promise.all(Array.from({ length: 200 }, async () => await login(EMAIL, WRONG)))
  const statuses = new Map<number, number>()
  for (const { statusCode } of responses) statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1)
  t.ok(app.passwordAuth.stats().verifications <= 5, `${app.passwordAuth.stats().verifications} verifications`)
  t.equal(statuses.get(401), app.passwordAuth.stats().verifications, 'one 401 per verification')
  t.equal(statuses.get(429), 200 - (statuses.get(401) ?? 0), 'all others 429')
  for (const response of responses.filter((r) => r.statusCode === 429)) t.ok(Number(response.headers['retry-after']) >= 1)
})

t.test('an attempt that could not be decided does not count', async (t) => {
  const { login } = await buildTestApp(t, { auth: { hashing: { threads: 1, maxQueue: 0 } } })
  // With no room to wait, concurrent attempts beyond the first are shed with 503 and must not count.
  for (let round = 0; round < 3; round++) {
    const statuses = (await Promise.all([login(EMAIL, WRONG), login(EMAIL, WRONG), login(EMAIL, WRONG)])).map((r) => r.statusCode)
    t.ok(statuses.includes(503), `round ${round}: ${statuses.join(',')}`)
  }
  t.equal((await login()).statusCode, 200, 'fewer than five failures were counted')
})
