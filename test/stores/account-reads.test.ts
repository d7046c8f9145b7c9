import type { FastifyBaseLogger } from 'fastify'
import t from 'tap'
import { MemoryAccountStore } from '../../lib/index.js'
import { AccountReads } from '../../lib/stores/account-reads.js'
import { createStoreCall } from '../../lib/stores/store-call.js'

// The door every room reads accounts through: the store's answers, failures closed under the store's own labels.
function recordingCaller (): { caller: { log: FastifyBaseLogger }, errors: Array<Record<string, any>> } {
  const errors: Array<Record<string, any>> = []
  return { caller: { log: { error: (entry: Record<string, any>) => { errors.push(entry) } } as unknown as FastifyBaseLogger }, errors }
}

t.test('byId and byEmail answer what the store has, null for what it has not', async (t) => {
  const store = new MemoryAccountStore()
  const ada = store.add({ email: 'ada@example.com', passwordHash: 'hash-0' })
  const reads = new AccountReads(store, createStoreCall(1000))
  const { caller, errors } = recordingCaller()
  t.equal((await reads.byId(caller, ada.id))?.email, 'ada@example.com')
  t.equal((await reads.byEmail(caller, 'ada@example.com'))?.passwordHash, 'hash-0', 'by address, with the hash')
  t.equal(await reads.byId(caller, 'nobody'), null)
  t.equal(await reads.byEmail(caller, 'nobody@example.com'), null)
  t.equal((await reads.byIdInsideStoreCall(ada.id))?.id, ada.id, 'the bare read, for a store call of the caller\'s own')
  t.same(errors, [])
})

t.test('a failing store is a 503, logged as accounts.findById or accounts.findByEmail', async (t) => {
  const broken = async (): Promise<never> => { throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }) }
  const reads = new AccountReads({ findById: broken, findByEmail: broken, updatePasswordHash: broken }, createStoreCall(1000))
  const { caller, errors } = recordingCaller()
  await t.rejects(reads.byId(caller, 'id'), { code: 'FST_PWAUTH_UNAVAILABLE', statusCode: 503 })
  await t.rejects(reads.byEmail(caller, 'ada@example.com'), { code: 'FST_PWAUTH_UNAVAILABLE', statusCode: 503 })
  t.match(errors, [{ operation: 'accounts.findById', storeError: { code: 'ECONNREFUSED' } }, { operation: 'accounts.findByEmail', storeError: { code: 'ECONNREFUSED' } }])
})
