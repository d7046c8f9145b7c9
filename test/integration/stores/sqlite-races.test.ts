import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import t from 'tap'
import { SqliteOneTimeTokenStore, SqliteSessionStore } from '../../../lib/stores/sqlite/index.js'
import { CONTRACT_THROTTLE_POLICY } from '../../../lib/stores/testing/index.js'
import { sqliteDatabase, sqliteFile, sqliteUnavailable } from '../../helpers/sqlite.js'

const WORKERS = 4
/** Long enough for worker threads that start slowly on a loaded machine. */
const SESSION_POLICY = { idleMs: 120_000, maxMs: 120_000, graceMs: 120_000 }
const STORES = new URL('../../../lib/stores/sqlite/index.js', import.meta.url).href
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3')

/**
 * Each worker thread opens its own connection to the file (as another process would), waits until all are ready,
 * then races: consumes one token, rotates one session's generation 0, and reserves ten attempts of one key.
 */
const RACER = `
const { workerData, parentPort } = require('node:worker_threads')
const Database = require(workerData.driver)
import(workerData.stores).then(async ({ SqliteAttemptStore, SqliteOneTimeTokenStore, SqliteSessionStore }) => {
  const database = new Database(workerData.file)
  database.pragma('busy_timeout = 10000')
  const tokens = new SqliteOneTimeTokenStore({ database })
  const sessions = new SqliteSessionStore({ database })
  const attempts = new SqliteAttemptStore({ database })
  const ready = new Int32Array(workerData.barrier)
  Atomics.add(ready, 0, 1)
  while (Atomics.load(ready, 0) < workerData.workers) Atomics.wait(ready, 0, Atomics.load(ready, 0), 2)
  const consumed = await tokens.consume('slot', 'hash', 'password_reset')
  const rotation = await sessions.rotate('session', 0, 'k2', workerData.sessionPolicy)
  let granted = 0
  for (let i = 0; i < 10; i++) if ((await attempts.reserve('key', workerData.ticket + i, workerData.throttlePolicy)).granted) granted++
  database.close()
  parentPort.postMessage({ consumed: consumed !== null, rotation: rotation.outcome, granted })
}).catch((err) => { parentPort.postMessage({ error: err.message }) })
`

async function race (file: string): Promise<Array<{ consumed: boolean, rotation: string, granted: number, error?: string }>> {
  const barrier = new SharedArrayBuffer(4)
  return await Promise.all(Array.from({ length: WORKERS }, async (_, i) => await new Promise<any>((resolve, reject) => {
    const worker = new Worker(RACER, {
      eval: true,
      workerData: {
        file,
        barrier,
        workers: WORKERS,
        driver: DRIVER,
        stores: STORES,
        ticket: `w${i}-`,
        sessionPolicy: SESSION_POLICY,
        throttlePolicy: CONTRACT_THROTTLE_POLICY
      }
    })
    worker.once('message', resolve)
    worker.once('error', reject)
  })))
}

t.test(`${WORKERS} connections to one file racing at once: one consume winner, one rotation, attempts never past the rule`, { skip: sqliteUnavailable }, async (t) => {
  for (let round = 0; round < 3; round++) {
    const file = sqliteFile(t)
    const database = sqliteDatabase(t, file)
    await new SqliteOneTimeTokenStore({ database }).put('slot', 'hash', { purpose: 'password_reset', accountId: 'a', email: 'a@example.com', credentialVersion: 0 }, 60_000)
    await new SqliteSessionStore({ database }).create({ id: 'session', accountId: 'a', credentialVersion: 0, keyId: 'k', ip: '', userAgent: '' }, SESSION_POLICY)
    const results = await race(file)
    t.same(results.filter((result) => result.error !== undefined), [], `round ${round}: no worker failed (SQLITE_BUSY included)`)
    t.equal(results.filter((result) => result.consumed).length, 1, `round ${round}: one consume got the token`)
    t.same(results.map((result) => result.rotation).sort(), ['grace', 'grace', 'grace', 'rotated'], `round ${round}: one rotation, the others the grace answer`)
    t.equal(results.reduce((sum, result) => sum + result.granted, 0), CONTRACT_THROTTLE_POLICY.freeFailures, `round ${round}: only freeFailures reservations granted in all`)
  }
})
