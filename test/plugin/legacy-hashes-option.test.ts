import { createHash, timingSafeEqual } from 'node:crypto'
import Fastify from 'fastify'
import t from 'tap'
import passwordAuth, { MemoryAccountStore, type AuthEvent, type LegacyHashFormat } from '../../lib/index.js'
import { buildTestApp, CHEAP_ARGON2, PLUGIN_TIMEOUT_MS, SECRET } from '../helpers/app.js'
import { BCRYPT_2B, PASSWORD, SCRYPT } from '../fixtures/legacy-hashes.js'

const UPGRADED = /^\$argon2id\$v=19\$m=1024,t=1,p=1\$/

/** An old PHP site's salted SHA-1: `sha1$<salt>$<hex>`. */
const phpSha1: LegacyHashFormat = {
  name: 'php-sha1',
  test: (hash) => /^sha1\$[^$]+\$[0-9a-f]{40}$/.test(hash),
  verify: async (hash, password) => {
    const [, salt, hex] = hash.split('$')
    return timingSafeEqual(createHash('sha1').update(salt + password).digest(), Buffer.from(hex!, 'hex'))
  }
}
const sha1Hash = (password: string, salt = 'pepperoni'): string => `sha1$${salt}$${createHash('sha1').update(salt + password).digest('hex')}`

t.test('a host format logs in, is upgraded, and fails like any other format', async (t) => {
  const events: AuthEvent[] = []
  const app = await buildTestApp(t, { auth: { legacyHashes: [phpSha1], onEvent: (event) => { events.push(event) } } })
  app.accounts.add({ email: 'php@example.com', passwordHash: sha1Hash(PASSWORD) })
  app.accounts.add({ email: 'php2@example.com', passwordHash: sha1Hash(PASSWORD, 'other') })
  t.equal((await app.login('php2@example.com', 'wrong password')).statusCode, 401)
  t.match(events.at(-1), { type: 'login.failed', reason: 'wrong_password' })
  t.equal((await app.login('php@example.com', PASSWORD)).statusCode, 200)
  t.match((await app.accounts.findByEmail('php@example.com'))?.passwordHash, UPGRADED)
  t.match(events.find((e) => e.type === 'password.rehashed'), { from: 'php-sha1' })
  t.equal((await app.login('php@example.com', PASSWORD)).statusCode, 200)
  app.accounts.add({ email: 'b@example.com', passwordHash: BCRYPT_2B })
  t.equal((await app.login('b@example.com', PASSWORD)).statusCode, 200, 'the built-in formats still work')
})

t.test('a host verifier that throws fails the request closed with 503 and counts neither way', async (t) => {
  const lines: string[] = []
  const broken: LegacyHashFormat = { name: 'remote', test: (hash) => hash.startsWith('remote$'), verify: async () => { throw new Error('verification service down') } }
  const app = await buildTestApp(t, {
    auth: { legacyHashes: [broken] },
    fastify: { logger: { level: 'error', stream: { write: (line: string) => { lines.push(line) } } } }
  })
  app.accounts.add({ email: 'remote@example.com', passwordHash: 'remote$42' })
  for (let i = 0; i < 7; i++) {
    const response = await app.login('remote@example.com', PASSWORD)
    t.equal(response.statusCode, 503)
    t.equal(response.json().code, 'FST_PWAUTH_UNAVAILABLE')
  }
  t.match(lines.join(''), /verification service down/)
  t.notMatch(lines.join(''), /remote\$42/, 'the stored hash is not logged')

  const picky = await buildTestApp(t, { auth: { legacyHashes: [{ name: 'picky', test: () => { throw new Error('test broke') }, verify: async () => true }] } })
  picky.accounts.add({ email: 'b@example.com', passwordHash: BCRYPT_2B })
  t.equal((await picky.login('b@example.com', PASSWORD)).statusCode, 503, 'so does a test that throws')
})

t.test('legacyHashes is checked at registration', async (t) => {
  const valid = { name: 'x', test: () => false, verify: async () => false }
  const cases: Array<[unknown, string]> = [
    [{ name: 'x' }, 'legacyHashes must be an array of { name, test, verify }'],
    [[null], 'legacyHashes[0] must be an object { name, test, verify }'],
    [['php'], 'legacyHashes[0] must be an object { name, test, verify }'],
    [[{ ...valid, name: undefined }], 'legacyHashes[0].name must be 1 to 64 letters, digits, _ . or -'],
    [[{ ...valid, name: '' }], 'legacyHashes[0].name must be 1 to 64 letters, digits, _ . or -'],
    [[{ ...valid, name: 'with space' }], 'legacyHashes[0].name must be 1 to 64 letters, digits, _ . or -'],
    [[{ ...valid, name: 'x'.repeat(65) }], 'legacyHashes[0].name must be 1 to 64 letters, digits, _ . or -'],
    [[valid, { ...valid }], 'legacyHashes[1].name "x" is already taken'],
    [[{ ...valid, name: 'bcrypt' }], 'legacyHashes[0].name "bcrypt" is already taken'],
    [[{ ...valid, name: 'argon2id' }], 'legacyHashes[0].name "argon2id" is already taken'],
    [[{ ...valid, test: /^sha1\$/ }], 'legacyHashes[0].test must be a function (hash) => boolean'],
    [[{ ...valid, verify: undefined }], 'legacyHashes[0].verify must be a function (hash, password) => Promise<boolean>']
  ]
  for (const [legacyHashes, message] of cases) {
    const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
    t.teardown(async () => { await app.close() })
    await t.rejects(async () => {
      await app.register(passwordAuth, {
        accounts: new MemoryAccountStore(),
        jwt: { secret: SECRET },
        legacyHashes: legacyHashes as LegacyHashFormat[]
      }).ready()
    }, { code: 'FST_PWAUTH_INVALID_OPTION', message: `fastify-password-auth: ${message}` }, message)
  }
  const app = await buildTestApp(t, { auth: { legacyHashes: [] } })
  t.equal((await app.login()).statusCode, 200, 'an empty list is fine')
})

t.test('@node-rs/bcrypt not installed: bcrypt accounts fail with unsupported_hash, one error tells the host what to do', async (t) => {
  // The built plugin (`npm test` builds first) with its hashing threads told to load a package that is not
  // installed in place of @node-rs/bcrypt, as they meet it when it is missing. tap's mocks follow the
  // relative imports of JavaScript files, not of .ts sources, and do not reach into worker threads.
  const bcrypt = await import('../../lib/password/legacy/bcrypt.js')
  const plugin = await t.mockImport<typeof import('../../lib/index.js')>('../../dist/lib/index.js', {
    '../../dist/lib/password/legacy/bcrypt.js': { ...bcrypt, BCRYPT_MODULE: '@node-rs/bcrypt-not-installed' }
  })
  const lines: string[] = []
  const events: AuthEvent[] = []
  const accounts = new plugin.MemoryAccountStore()
  accounts.add({ email: 'b@example.com', passwordHash: BCRYPT_2B })
  accounts.add({ email: 's@example.com', passwordHash: SCRYPT })
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS, logger: { level: 'error', stream: { write: (line: string) => { lines.push(line) } } } })
  t.teardown(async () => { await app.close() })
  await app.register(plugin.default, {
    accounts,
    jwt: { secret: SECRET },
    argon2: CHEAP_ARGON2,
    rateLimit: false,
    onEvent: (event) => { events.push(event) }
  })
  const login = async (email: string) => await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email, password: PASSWORD } })

  const unknown = await login('nobody@example.com')
  for (let i = 0; i < 3; i++) {
    const before = app.passwordAuth.stats().verifications
    const response = await login('b@example.com')
    t.equal(response.statusCode, 401)
    t.same(response.json(), unknown.json())
    t.match(events.at(-1), { type: 'login.failed', reason: 'unsupported_hash' })
    t.equal(app.passwordAuth.stats().verifications - before, 1, 'still one (dummy) verification')
  }
  const errors = lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 50)
  t.equal(errors.length, 1, 'logged once')
  t.match(errors[0], { msg: /npm install @node-rs\/bcrypt/, importError: { code: 'MODULE_NOT_FOUND', message: /bcrypt-not-installed/ } })
  t.equal((await accounts.findByEmail('b@example.com'))?.passwordHash, BCRYPT_2B, 'left as it was')
  t.equal((await login('s@example.com')).statusCode, 200, 'other formats are unaffected')
})
