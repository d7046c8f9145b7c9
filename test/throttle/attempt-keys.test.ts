import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import { MemoryAttemptStore, type AttemptStore } from '../../lib/index.js'
import { buildTestApp, EMAIL } from '../helpers/app.js'

/** The keys an app's per-e-mail throttle hands its attempt store for one failed login of `EMAIL`. */
async function keysOf (t: Test, secret: string): Promise<string[]> {
  const keys: string[] = []
  const memory = new MemoryAttemptStore()
  const attempts: AttemptStore = {
    reserve: async (key, ticket, policy) => { keys.push(key); return await memory.reserve(key, ticket, policy) },
    settle: async (key, ticket, outcome, policy) => { await memory.settle(key, ticket, outcome, policy) }
  }
  const { login } = await buildTestApp(t, { auth: { attempts, jwt: { secret } } })
  await login(EMAIL, 'a wrong password')
  return keys
}

t.test('attempt keys are keyed hashes of the e-mail: not reversible from a list of addresses, the same on instances sharing the keys', async (t) => {
  const secret = 'attempt-key-secret-of-at-least-32-bytes'
  const [key] = await keysOf(t, secret)
  t.match(key, /^[\w-]{43}$/, 'a 256-bit value, base64url')
  t.not(key, createHash('sha256').update(EMAIL).digest('base64url'), 'not a plain SHA-256 of the address')
  t.notOk(key!.includes('example'), 'no trace of the address')
  t.same(await keysOf(t, secret), [key], 'another instance with the same keys counts on the same key')
  t.not((await keysOf(t, 'another-secret-of-at-least-32-bytes-long'))[0], key, 'other keys, another key')
})
