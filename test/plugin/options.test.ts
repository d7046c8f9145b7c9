import Fastify from 'fastify'
import t from 'tap'
import defaultExport, * as api from '../../lib/index.js'
import { MemoryAccountStore, MemorySessionStore, type PasswordAuthOptions } from '../../lib/index.js'
import { CHEAP_ARGON2, PLUGIN_TIMEOUT_MS, SECRET } from '../helpers/app.js'

const base = (): PasswordAuthOptions => ({
  accounts: new MemoryAccountStore(),
  sessions: new MemorySessionStore(),
  jwt: { secret: SECRET },
  argon2: CHEAP_ARGON2
})

async function registrationError (options: unknown): Promise<Error & { code?: string }> {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  try {
    await app.register(defaultExport, options as PasswordAuthOptions)
    await app.ready()
  } catch (err) {
    return err as Error
  } finally {
    await app.close()
  }
  throw new Error('registration did not fail')
}

t.test('the plugin is the default export and the named export', async (t) => {
  t.equal(api.fastifyPasswordAuth, defaultExport)
  t.type(defaultExport, 'function')
  t.equal((defaultExport as unknown as Record<symbol, unknown>)[Symbol.for('fastify.display-name')], 'fastify-password-auth')
})

t.test('a valid configuration registers', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(defaultExport, base())
  await app.ready()
  t.notOk(app.hasDecorator('authenticate'), 'no fastify.authenticate unless asked for: import the guard')
  t.ok(app.hasRequestDecorator('account'))
  t.ok(app.hasDecorator('passwordAuth'))
})

const cases: Array<[string, (options: any) => unknown, string]> = [
  ['no options', () => undefined, 'the "accounts" store is required'],
  ['no account store', ({ accounts: _, ...rest }) => rest, 'the "accounts" store is required'],
  ['account store without findById', (o) => ({ ...o, accounts: { findByEmail: async () => null, updatePasswordHash: async () => false } }), 'the "accounts" store has no method findById()'],
  ['account store without updatePasswordHash', (o) => ({ ...o, accounts: { findByEmail: async () => null, findById: async () => null } }), 'the "accounts" store has no method updatePasswordHash()'],
  ['session store without endAll', (o) => ({ ...o, sessions: { create: async () => {}, get: async () => null, rotate: async () => {}, reauthenticate: async () => null, end: async () => null, list: async () => [] } }), 'the "sessions" store has no method endAll()'],
  ['attempt store without settle', (o) => ({ ...o, attempts: { reserve: async () => ({ granted: true }) } }), 'the "attempts" store has no method settle()'],
  ['no jwt option', ({ jwt: _, ...rest }) => rest, 'the "jwt" option is required, e.g. { secret: <at least 32 random bytes> }'],
  ['no secret', (o) => ({ ...o, jwt: {} }), 'jwt.secret is required for HS256 (at least 32 random bytes)'],
  ['short secret', (o) => ({ ...o, jwt: { secret: 'x'.repeat(31) } }), 'jwt.secret must be at least 32 bytes long'],
  ['short buffer secret', (o) => ({ ...o, jwt: { secret: Buffer.alloc(16) } }), 'jwt.secret must be at least 32 bytes long'],
  ['unsupported algorithm', (o) => ({ ...o, jwt: { secret: SECRET, algorithm: 'HS512' } }), 'jwt.algorithm must be one of HS256, EdDSA, ES256'],
  ['none algorithm', (o) => ({ ...o, jwt: { algorithm: 'none' } }), 'jwt.algorithm must be one of HS256, EdDSA, ES256'],
  ['key pair algorithm without keys', (o) => ({ ...o, jwt: { algorithm: 'EdDSA' } }), 'jwt: EdDSA needs privateKey and/or publicKey'],
  ['key pair algorithm with a secret', (o) => ({ ...o, jwt: { algorithm: 'ES256', secret: SECRET } }), 'jwt.secret is for HS256; ES256 takes privateKey and publicKey'],
  ['keys that are not keys', (o) => ({ ...o, jwt: { algorithm: 'EdDSA', privateKey: 'nope', publicKey: 'nope' } }), 'jwt: the EdDSA keys cannot be read'],
  ['empty issuer', (o) => ({ ...o, jwt: { secret: SECRET, issuer: '' } }), 'jwt.issuer must be a non-empty string'],
  ['audience not a string', (o) => ({ ...o, jwt: { secret: SECRET, audience: ['a'] } }), 'jwt.audience must be a non-empty string'],
  ['zero lifetime', (o) => ({ ...o, jwt: { secret: SECRET, expiresIn: 0 } }), 'jwt.expiresIn must be a whole number of seconds from 1 to 86400'],
  ['fractional lifetime', (o) => ({ ...o, jwt: { secret: SECRET, expiresIn: 1.5 } }), 'jwt.expiresIn must be a whole number of seconds from 1 to 86400'],
  ['prefix with a trailing slash', (o) => ({ ...o, prefix: '/auth/' }), 'prefix must be empty or a path starting with / and not ending with /'],
  ['prefix without a leading slash', (o) => ({ ...o, prefix: 'auth' }), 'prefix must be empty or a path starting with / and not ending with /'],
  ['realm with a quote', (o) => ({ ...o, realm: 'a"b' }), 'realm must be a non-empty string of printable ASCII without " or \\'],
  ['realm with a line break', (o) => ({ ...o, realm: 'a\r\nSet-Cookie: x' }), 'realm must be a non-empty string of printable ASCII without " or \\'],
  ['argon2 memory below 8 KiB per lane', (o) => ({ ...o, argon2: { memoryCost: 4 } }), 'argon2.memoryCost must be KiB from 8 × parallelism to 4194304'],
  ['argon2 time cost 0', (o) => ({ ...o, argon2: { timeCost: 0 } }), 'argon2.timeCost must be a whole number from 1 to 100'],
  ['argon2 parallelism 0', (o) => ({ ...o, argon2: { parallelism: 0 } }), 'argon2.parallelism must be a whole number from 1 to 255'],
  ['empty pepper', (o) => ({ ...o, argon2: { pepper: '' } }), 'argon2.pepper must not be empty'],
  ['pepper of the wrong type', (o) => ({ ...o, argon2: { pepper: 42 } }), 'argon2.pepper must be a string or a Uint8Array'],
  ['policy minimum 0', (o) => ({ ...o, passwordPolicy: { minLength: 0 } }), 'passwordPolicy.minLength must be a whole number from 1 to 1024'],
  ['policy maximum under minimum', (o) => ({ ...o, passwordPolicy: { minLength: 20, maxLength: 10 } }), 'passwordPolicy.maxLength must be a whole number from minLength to 1024'],
  ['policy check not a function', (o) => ({ ...o, passwordPolicy: { check: 'blocklist.txt' } }), 'passwordPolicy.check must be a function'],
  ['throttle without free failures', (o) => ({ ...o, throttle: { freeFailures: 0 } }), 'throttle.freeFailures must be a whole number from 1 to 1000'],
  ['throttle maximum under the first block', (o) => ({ ...o, throttle: { blockSeconds: 60, maxBlockSeconds: 30 } }), 'throttle.maxBlockSeconds must be a whole number of seconds, at least blockSeconds'],
  ['rate limit not an object', (o) => ({ ...o, rateLimit: true }), 'rateLimit must be an object or false'],
  ['hashing threads 0', (o) => ({ ...o, hashing: { threads: 0 } }), 'hashing.threads must be a whole number from 1 to 1024'],
  ['hashing threads 1.5', (o) => ({ ...o, hashing: { threads: 1.5 } }), 'hashing.threads must be a whole number from 1 to 1024'],
  ['hashing threads 1025', (o) => ({ ...o, hashing: { threads: 1025 } }), 'hashing.threads must be a whole number from 1 to 1024'],
  ['negative hashing queue', (o) => ({ ...o, hashing: { maxQueue: -1 } }), 'hashing.maxQueue must be a whole number from 0 to 1000000'],
  ['mfa.ttl 0', (o) => ({ ...o, mfa: { ttl: 0 } }), 'mfa.ttl must be a whole number of seconds from 1 to 3600'],
  ['mfa.ttl 1.5', (o) => ({ ...o, mfa: { ttl: 1.5 } }), 'mfa.ttl must be a whole number of seconds from 1 to 3600'],
  ['passwordReset.ttl 0', (o) => ({ ...o, deliver: () => {}, passwordReset: { ttl: 0 } }), 'passwordReset.ttl must be a whole number of seconds from 1 to 86400'],
  ['registration.ttl above 30 days', (o) => ({ ...o, deliver: () => {}, registration: { ttl: 30 * 86_400 + 1 } }), 'registration.ttl must be a whole number of seconds from 1 to 2592000'],
  ['account.verifyTtl 0', (o) => ({ ...o, account: { verifyTtl: 0 } }), 'account.verifyTtl must be a whole number of seconds from 1 to 2592000'],
  ['store timeout 0', (o) => ({ ...o, storeTimeout: 0 }), 'storeTimeout must be a whole number of milliseconds from 1 to 60000'],
  ['onEvent not a function', (o) => ({ ...o, onEvent: 'log' }), 'onEvent must be a function'],
  ['guard name with a space', (o) => ({ ...o, decorators: { authenticate: 'my guard' } }), 'decorators.authenticate must be false or a name of letters, digits, _ and $, not starting with a digit'],
  ['guard name true', (o) => ({ ...o, decorators: { authenticate: true } }), 'decorators.authenticate must be false or a name of letters, digits, _ and $, not starting with a digit'],
  ['account name false', (o) => ({ ...o, decorators: { account: false } }), 'decorators.account must be a name of letters, digits, _ and $, not starting with a digit'],
  ['account name starting with a digit', (o) => ({ ...o, decorators: { account: '1st' } }), 'decorators.account must be a name of letters, digits, _ and $, not starting with a digit']
]

const misspelt: Array<[string, (options: any) => unknown, string]> = [
  ['expiresin', (o) => ({ ...o, jwt: { secret: SECRET, expiresin: 60 } }), 'unknown option jwt.expiresin: did you mean jwt.expiresIn?'],
  ['ratelimit', (o) => ({ ...o, ratelimit: false }), 'unknown option ratelimit: did you mean rateLimit?'],
  ['revocations', (o) => ({ ...o, revocations: {} }), 'unknown option revocations: did you mean sessions?'],
  ['rateLimit.maximum', (o) => ({ ...o, rateLimit: { maximum: 10 } }), 'unknown option rateLimit.maximum: did you mean rateLimit.max?'],
  ['throttle.freefailures', (o) => ({ ...o, throttle: { freefailures: 3 } }), 'unknown option throttle.freefailures: did you mean throttle.freeFailures?'],
  ['refresh.idle', (o) => ({ ...o, refresh: { idle: 60 } }), 'unknown option refresh.idle: did you mean refresh.idleTimeout?'],
  ['refresh.cookie.nam', (o) => ({ ...o, refresh: { cookie: { nam: 'x' } } }), 'unknown option refresh.cookie.nam: did you mean refresh.cookie.name?'],
  ['argon2.memory', (o) => ({ ...o, argon2: { memory: 1024 } }), 'unknown option argon2.memory: did you mean argon2.memoryCost?'],
  ['hashing as a number', (o) => ({ ...o, hashing: 4 }), 'hashing must be an object'],
  ['hashing.concurrency, renamed', (o) => ({ ...o, hashing: { concurrency: 4 } }), 'unknown option hashing.concurrency: did you mean hashing.threads?'],
  ['hashing.thread', (o) => ({ ...o, hashing: { thread: 4 } }), 'unknown option hashing.thread: did you mean hashing.threads?'],
  ['hashing.maxqueue', (o) => ({ ...o, hashing: { maxqueue: 4 } }), 'unknown option hashing.maxqueue: did you mean hashing.maxQueue?'],
  ['decorators.acount', (o) => ({ ...o, decorators: { acount: 'member' } }), 'unknown option decorators.acount: did you mean decorators.account?'],
  ['decorators as a string', (o) => ({ ...o, decorators: 'authenticate' }), 'decorators must be an object'],
  ['options not an object', () => 'secret', 'the options are required, e.g. { accounts, jwt: { secret } }'],
  ['mfa.ttll', (o) => ({ ...o, mfa: { ttll: 60 } }), 'unknown option mfa.ttll: did you mean mfa.ttl?'],
  ['mfa.stor', (o) => ({ ...o, mfa: { stor: {} } }), 'unknown option mfa.stor: did you mean mfa.store?'],
  ['mfa.mfaTtl, the old name inside the group', (o) => ({ ...o, mfa: { mfaTtl: 60 } }), 'unknown option mfa.mfaTtl: did you mean mfa.ttl?'],
  ['passwordReset.tll', (o) => ({ ...o, passwordReset: { tll: 60 } }), 'unknown option passwordReset.tll: did you mean passwordReset.ttl?'],
  ['registration.field', (o) => ({ ...o, registration: { field: {} } }), 'unknown option registration.field: did you mean registration.fields?'],
  ['account.verifyTTL', (o) => ({ ...o, account: { verifyTTL: 60 } }), 'unknown option account.verifyTTL: did you mean account.verifyTtl?']
]

cases.push(...misspelt.map(([name, make, message]): [string, (options: any) => unknown, string] => [`misspelt: ${name}`, make, message]))

for (const [name, makeOptions, message] of cases) {
  t.test(`registration fails clearly: ${name}`, async (t) => {
    const error = await registrationError(makeOptions(base()))
    t.equal(error.code, 'FST_PWAUTH_INVALID_OPTION')
    t.ok(error.message.startsWith(message.startsWith('fastify-password-auth: ') ? message : `fastify-password-auth: ${message}`), error.message)
    t.notMatch(error.message, SECRET, 'never quotes the secret')
  })
}

t.test('registering twice on one instance is refused', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(defaultExport, base())
  await t.rejects(async () => { await app.register(defaultExport, { ...base(), prefix: '/Other' }).ready() }, { code: 'FST_PWAUTH_ALREADY_REGISTERED' })
})
