import t, { type Test } from 'tap'
import { MemoryAttemptStore, type AttemptOutcome, type AttemptStore, type ThrottlePolicy } from '../../../lib/index.js'
import { createMysqlSchema, MysqlAttemptStore } from '../../../lib/stores/mysql/index.js'
import { createPostgresSchema, PostgresAttemptStore } from '../../../lib/stores/postgres/index.js'
import { RedisAttemptStore } from '../../../lib/stores/redis/index.js'
import { SqliteAttemptStore } from '../../../lib/stores/sqlite/index.js'
import { admit, afterOutcome, NO_COUNTS } from '../../../lib/stores/attempt-rules.js'
import { deleteKeys, postgresSchema, postgresUnavailable, redisClient, redisUnavailable } from '../../helpers/services.js'
import { mysqlDatabase, mysqlUnavailable } from '../../helpers/mysql.js'
import { sqliteDatabase, sqliteFile, sqliteUnavailable } from '../../helpers/sqlite.js'

const POLICY: ThrottlePolicy = { freeFailures: 2, blockMs: 300, maxBlockMs: 700, leaseMs: 250, forgetAfterMs: 600 }
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

t.test('the rules: free failures, a block that doubles up to its cap, in-flight slots, reset and forgetting', async (t) => {
  const now = 1_000_000
  let counts = afterOutcome(NO_COUNTS, 'failure', now, POLICY)
  t.same(counts, { failures: 1, blockedUntil: 0, forgetAt: now + 600 })
  t.same(admit(counts, 0, now, POLICY), { granted: true })
  t.same(admit(counts, 1, now, POLICY), { granted: false, retryAfterMs: 250 }, 'one slot left, and it is taken')
  counts = afterOutcome(counts, 'failure', now, POLICY)
  t.same(counts, { failures: 2, blockedUntil: now + 300, forgetAt: now + 900 })
  t.same(admit(counts, 0, now + 100, POLICY), { granted: false, retryAfterMs: 200 })
  t.same(afterOutcome(counts, 'failure', now + 300, POLICY).blockedUntil, now + 900, 'doubled')
  t.same(afterOutcome({ ...counts, failures: 40 }, 'failure', now, POLICY).blockedUntil, now + 700, 'capped')
  t.equal(afterOutcome(counts, 'cancel', now, POLICY), counts, 'a cancel changes nothing')
  t.same(afterOutcome(counts, 'success', now, POLICY), NO_COUNTS)
  t.same(afterOutcome(counts, 'failure', now + 900, POLICY).failures, 1, 'forgotten failures start again from one')
  t.same(admit({ ...counts, blockedUntil: 0 }, 1, now + 899, POLICY), { granted: false, retryAfterMs: 250 }, 'no free failure left: one slot, taken')
  t.same(admit({ ...counts, blockedUntil: 0 }, 1, now + 900, POLICY), { granted: true }, 'forgotten: both slots are back')
})

type Step = { reserve: string } | { settle: string, outcome: AttemptOutcome } | { sleep: number }

// Every rule once: free failures, in-flight slots, a block doubling to its cap, a repeated ticket,
// leases running out, cancel, success, forgetting.
const SCRIPT: Step[] = [
  { reserve: 'a' }, { settle: 'a', outcome: 'failure' },
  { reserve: 'b' }, { reserve: 'c' }, { settle: 'b', outcome: 'failure' },
  { reserve: 'd' }, { sleep: 330 },
  { reserve: 'e' }, { reserve: 'e' }, { reserve: 'f' }, { settle: 'e', outcome: 'failure' }, { reserve: 'g' }, { sleep: 630 },
  { reserve: 'h' }, { settle: 'h', outcome: 'failure' }, { reserve: 'i' }, { sleep: 730 },
  { reserve: 'j' }, { settle: 'j', outcome: 'success' },
  { reserve: 'k' }, { reserve: 'l' }, { reserve: 'm' }, { settle: 'k', outcome: 'cancel' }, { reserve: 'n' }, { sleep: 280 },
  { reserve: 'o' }, { settle: 'o', outcome: 'failure' }, { sleep: 650 }, { reserve: 'p' }, { reserve: 'q' }
]

const EXPECTED = [
  'granted', 'granted', 'denied', 'denied', // a, b, c in flight, d blocked
  'granted', 'granted', 'denied', 'denied', // e, e again, f in flight, g blocked twice as long
  'granted', 'denied', // h after the block, i blocked (capped)
  'granted', // j after the block, then success
  'granted', 'granted', 'denied', 'granted', // k, l, m full, n after k's cancel
  'granted', 'granted', 'granted' // o after the leases ran out; p, q after o's failure was forgotten
]

async function run (store: AttemptStore, step: Step): Promise<string> {
  if ('reserve' in step) {
    const reservation = await store.reserve('key', step.reserve, POLICY)
    return reservation.granted ? 'granted' : `denied ${reservation.retryAfterMs}`
  }
  if ('settle' in step) await store.settle('key', step.settle, step.outcome, POLICY)
  return ''
}

/** Runs SCRIPT on the memory store and `other` side by side: same answers, waits within 50 ms. */
async function compare (t: Test, other: AttemptStore, name: string): Promise<string[]> {
  const memory = new MemoryAttemptStore()
  const answers: string[] = []
  for (const step of SCRIPT) {
    if ('sleep' in step) { await sleep(step.sleep); continue }
    const [fromMemory, fromOther] = [await run(memory, step), await run(other, step)]
    const [memoryWait, otherWait] = [Number(fromMemory.split(' ')[1] ?? 0), Number(fromOther.split(' ')[1] ?? 0)]
    t.ok(fromMemory.split(' ')[0] === fromOther.split(' ')[0] && Math.abs(memoryWait - otherWait) < 50,
      `${JSON.stringify(step)}: memory "${fromMemory}", ${name} "${fromOther}"`)
    if ('reserve' in step) answers.push(fromMemory.split(' ')[0]!)
  }
  return answers
}

t.test('the memory store and the PostgreSQL functions answer one sequence alike', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'rules')
  await createPostgresSchema(pool)
  t.same((await compare(t, new PostgresAttemptStore({ pool }), 'PostgreSQL')).join(','), EXPECTED.join(','))
})

t.test('the memory store and the Redis scripts answer one sequence alike', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  const prefix = `test:${process.pid}:${Date.now().toString(36)}:rules:`
  t.teardown(async () => { await deleteKeys(client, prefix) })
  const answers = await compare(t, new RedisAttemptStore({ client, prefix }), 'Redis')
  t.same(answers.join(','), EXPECTED.join(','))
})

t.test('the memory store and the SQLite store (the same rules, run in a BEGIN IMMEDIATE transaction) answer one sequence alike', { skip: sqliteUnavailable }, async (t) => {
  const database = sqliteDatabase(t, sqliteFile(t))
  t.same((await compare(t, new SqliteAttemptStore({ database }), 'SQLite')).join(','), EXPECTED.join(','))
})

t.test('the memory store and the MySQL store (the same rules, run in a transaction over the key\'s locked row) answer one sequence alike', { skip: mysqlUnavailable }, async (t) => {
  const { pool } = await mysqlDatabase(t, 'rules', { connectionLimit: 4 })
  await createMysqlSchema(pool)
  t.same((await compare(t, new MysqlAttemptStore({ pool }), 'MySQL')).join(','), EXPECTED.join(','))
})
