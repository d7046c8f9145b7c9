import type { FastifyBaseLogger } from 'fastify'
import t from 'tap'
import { Deadlines } from '../../lib/stores/store-call.js'
import { callAtOnce, createStoreCall } from '../../lib/stores/store-call.js'

// The routes' fail-closed behaviour is tested in store-failures.test.ts and outage.test.ts; these are the
// shared deadline timer's own edges.

function recordingLog (): { log: FastifyBaseLogger, errors: Array<Record<string, any>> } {
  const errors: Array<Record<string, any>> = []
  return { log: { error: (entry: Record<string, any>) => { errors.push(entry) } } as unknown as FastifyBaseLogger, errors }
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
const timers = (): number => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length

t.test('a call that answers in time resolves with its answer and leaves no deadline behind', async (t) => {
  const { log, errors } = recordingLog()
  const storeCall = createStoreCall(200)
  t.equal(await storeCall(log, 'accounts.findById', async () => 'answer'), 'answer')
  t.equal(await storeCall(log, 'sessions.get', (() => 42) as unknown as () => Promise<number>), 42, 'a store answering synchronously')
  t.same(errors, [])
})

t.test('a call that never answers fails closed after the timeout, within a tick, and is logged once', async (t) => {
  const { log, errors } = recordingLog()
  const storeCall = createStoreCall(300)
  let answerLate: (value: string) => void = () => {}
  const started = performance.now()
  await t.rejects(storeCall(log, 'sessions.get', async () => await new Promise<string>((resolve) => { answerLate = resolve })),
    { code: 'FST_PWAUTH_UNAVAILABLE', statusCode: 503, retryAfter: 1 })
  const took = performance.now() - started
  t.ok(took >= 299 && took < 300 + 15 + 100, `failed after ${took.toFixed(0)} ms`)
  t.match(errors, [{ operation: 'sessions.get', storeError: { name: 'Error', code: 'FST_PWAUTH_STORE_TIMEOUT', message: 'no answer within 300 ms' } }])
  answerLate('too late')
  await sleep(10)
  t.equal(errors.length, 1, 'a late answer changes nothing')

  let failLate: (err: Error) => void = () => {}
  await t.rejects(storeCall(log, 'sessions.end', async () => await new Promise<string>((_resolve, reject) => { failLate = reject })),
    { code: 'FST_PWAUTH_UNAVAILABLE' })
  failLate(new Error('connection reset'))
  await sleep(10)
  t.equal(errors.length, 2, 'nor does a late failure: logged once, as the timeout')
})

t.test('a store that throws, synchronously or not, fails closed and is logged without the error object', async (t) => {
  const { log, errors } = recordingLog()
  const storeCall = createStoreCall(1000)
  const failure = Object.assign(new Error('connection refused: ' + 'x'.repeat(400)), { code: 'ECONNREFUSED', command: { args: ['secret'] } })
  await t.rejects(storeCall(log, 'accounts.findById', async () => { throw failure }), { code: 'FST_PWAUTH_UNAVAILABLE' })
  await t.rejects(storeCall(log, 'sessions.get', () => { throw failure }), { code: 'FST_PWAUTH_UNAVAILABLE' })
  // eslint-disable-next-line no-throw-literal -- a store client that rejects with nothing at all
  await t.rejects(storeCall(log, 'sessions.end', async () => { throw undefined }), { code: 'FST_PWAUTH_UNAVAILABLE' })
  t.equal(errors.length, 3)
  t.same(Object.keys(errors[0]!.storeError), ['name', 'code', 'message'])
  t.equal(errors[0]!.storeError.message.length, 300, 'the message is cut short')
  t.equal(errors[1]!.operation, 'sessions.get')
  t.same(errors[2]!.storeError, { name: undefined, code: undefined, message: 'undefined' })
})

t.test('deadlines due at the same tick share a bucket; the timer runs only while some are waiting', async (t) => {
  const before = timers()
  const deadlines = new Deadlines(200, 100)
  t.equal(deadlines.tickMs, 100)
  const expired: Array<{ name: string, late: number }> = []
  const entry = (name: string): { expire: () => void } => {
    const added = performance.now()
    return { expire: () => { expired.push({ name, late: performance.now() - added - 200 }) } }
  }
  const a = entry('a')
  const bucket = deadlines.add(a)
  t.equal(deadlines.add(entry('b')), bucket, 'same tick, same bucket')
  const cancelled = entry('cancelled')
  deadlines.add(cancelled).delete(cancelled)
  t.equal(deadlines.size, 2)
  t.equal(timers(), before + 1, 'one timer for all of them')
  await sleep(150)
  t.not(deadlines.add(entry('c')), bucket, 'a later tick, a bucket of its own')
  for (let waited = 0; expired.length < 3 && waited < 2000; waited += 10) await sleep(10)
  t.same(expired.map(({ name }) => name), ['a', 'b', 'c'], 'in due order; the cancelled one never')
  for (const { name, late } of expired) t.ok(late >= -1, `${name} expired ${late.toFixed(0)} ms after its timeout, never before`)
  t.equal(deadlines.size, 0)
  await sleep(150)
  t.equal(timers(), before, 'no timer while nothing waits')
})

t.test('the default tick is a twentieth of the timeout, from 1 to 50 ms', async (t) => {
  t.equal(new Deadlines(2000).tickMs, 50)
  t.equal(new Deadlines(300).tickMs, 15)
  t.equal(new Deadlines(5).tickMs, 1)
})

t.test('a store method called at once (the memory stores\' reads) fails closed as storeCall does, logged alike', async (t) => {
  const { log, errors } = recordingLog()
  t.equal(callAtOnce(log, 'sessions.get', () => 42), 42, 'its answer, in the same turn')
  const failure = Object.assign(new Error('broken: ' + 'x'.repeat(400)), { code: 'EBROKEN', command: { args: ['secret'] } })
  t.throws(() => callAtOnce(log, 'accounts.findById', () => { throw failure }), { code: 'FST_PWAUTH_UNAVAILABLE', statusCode: 503, retryAfter: 1 })
  t.equal(errors.length, 1)
  t.equal(errors[0]!.operation, 'accounts.findById')
  t.same(Object.keys(errors[0]!.storeError), ['name', 'code', 'message'], 'the error\'s name, code and message only')
  t.equal(errors[0]!.storeError.code, 'EBROKEN')
  t.equal(errors[0]!.storeError.message.length, 300, 'the message cut short')
})
