import t from 'tap'
import { BCRYPT_MODULE } from '../../lib/password/legacy/bcrypt.js'
import { leaseHashing } from '../../lib/password/shared-hashing.js'
import { CHEAP_ARGON2 } from '../helpers/app.js'

const log = { error: () => {} }
const options = (pepper?: Uint8Array, threads = 2): Parameters<typeof leaseHashing>[0] =>
  ({ threads, maxQueue: 8, workerData: { params: CHEAP_ARGON2, pepper, bcryptModule: BCRYPT_MODULE }, log })

t.test('registrations configured alike share one pool and one queue; the last to let go ends its threads', async (t) => {
  const first = leaseHashing(options(new Uint8Array([1, 2, 3])))
  const second = leaseHashing(options(new Uint8Array([1, 2, 3])))
  t.equal(second.pool, first.pool)
  t.equal(second.queue, first.queue)
  await first.pool.hash('a password')
  await first.release()
  await first.release()
  t.equal(second.pool.started, 1, 'still running for the other registration (a second release changes nothing)')
  t.ok(await second.pool.hash('a password'))
  await second.release()
  t.equal(second.pool.started, 0, 'ended with the last one')
  const third = leaseHashing(options(new Uint8Array([1, 2, 3])))
  t.not(third.pool, first.pool, 'a closed pool is never handed out again')
  await third.release()
})

t.test('another pepper, or another number of threads, gets threads of its own', async (t) => {
  const leases = [leaseHashing(options(new Uint8Array([1]))), leaseHashing(options(new Uint8Array([2]))), leaseHashing(options(undefined)), leaseHashing(options(new Uint8Array([1]), 3))]
  t.teardown(async () => { await Promise.all(leases.map(async (lease) => { await lease.release() })) })
  t.equal(new Set(leases.map((lease) => lease.pool)).size, 4)
  t.equal(new Set(leases.map((lease) => lease.queue)).size, 4)
})
