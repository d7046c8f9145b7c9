import Fastify from 'fastify'
import t from 'tap'
import ts from 'typescript'
import passwordAuth, { hashPassword, MemoryAccountStore, MemoryActivityStore, type PasswordAuthMessage } from '../../lib/index.js'
import { CHEAP_ARGON2, EMAIL, PASSWORD, PLUGIN_TIMEOUT_MS } from '../helpers/app.js'
import { docBlock } from '../helpers/docs.js'

const GUIDE = 'example/docs/account.md'
/** A block of the guide as JavaScript (its TypeScript types stripped). */
const guideBlock = (name: string): string =>
  ts.transpileModule(docBlock(GUIDE, name), { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText
const AsyncFunction = (async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<unknown>

/** The guide's `new PostgresActivityStore({ pool })`, kept in memory here. */
class MemoryActivityStoreForPostgres {
  constructor () { return new MemoryActivityStore() }
}

t.test('the account guide\'s options and admin calls run as written', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  const accounts = new MemoryAccountStore()
  const ada = accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const messages: PasswordAuthMessage[] = []
  const wrapped = { register: async (plugin: typeof passwordAuth, options: object) => await app.register(plugin, { argon2: CHEAP_ARGON2, rateLimit: false, ...options } as never) }
  const options = new AsyncFunction('app', 'passwordAuth', 'accounts', 'deliver', 'billing', 'orders', 'PostgresActivityStore', 'pool', 'process', guideBlock('account-options'))
  await options(wrapped, passwordAuth, accounts, (message: PasswordAuthMessage) => { messages.push(message) },
    { hasOpenInvoices: async (id: string) => id === 'nobody' }, { of: async () => [7] }, MemoryActivityStoreForPostgres, undefined,
    { env: { JWT_SECRET: 'a-test-secret-of-at-least-32-bytes-long' } })
  await app.ready()
  const login = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })
  const headers = { authorization: `Bearer ${login.json().accessToken}` }
  t.match((await app.inject({ url: '/Auth/Account/Export', headers })).json(), { host: { orders: [7] } })

  const admin = new AsyncFunction('app', 'accountId', guideBlock('admin-api') + '\nreturn recent')
  const recent = await admin(app, ada.id) as Array<{ type: string }>
  t.equal(recent[0]!.type, 'admin.second_factor_reset', 'newest first')
  t.ok(recent.some((record) => record.type === 'admin.password_reset_required'))
  t.equal((await app.inject({ url: '/Auth/Account/Export', headers })).statusCode, 401, 'every session ended')
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })).statusCode, 403, 'the reset is required')
  t.ok(messages.some((message) => message.type === 'password_reset'))
})
