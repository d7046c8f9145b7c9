import Fastify from 'fastify'
import t from 'tap'
import passwordAuth, { MemoryAccountStore, type PasswordAuthOptions } from '../../lib/index.js'
import { CHEAP_ARGON2, PLUGIN_TIMEOUT_MS, SECRET } from '../helpers/app.js'

const RP = { rpId: 'example.com', rpName: 'Example', origins: ['https://example.com'] }
const base = (): PasswordAuthOptions => ({ accounts: new MemoryAccountStore(), jwt: { secret: SECRET }, argon2: CHEAP_ARGON2, rateLimit: false })

async function registrationError (options: unknown): Promise<Error & { code?: string }> {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  try {
    await app.register(passwordAuth, options as PasswordAuthOptions)
    await app.ready()
  } catch (err) {
    return err as Error
  } finally {
    await app.close()
  }
  throw new Error('registration succeeded')
}

const cases: Array<[string, Record<string, unknown>, string]> = [
  ['a misspelt passkeys option', { passkeys: { ...RP, origin: RP.origins } }, 'unknown option passkeys.origin: did you mean passkeys.origins?'],
  ['a misspelt top-level option', { passkey: RP }, 'unknown option passkey: did you mean passkeys?'],
  ['a misspelt option in the group', { passkeys: { ...RP, ttL: 60 } }, 'unknown option passkeys.ttL: did you mean passkeys.ttl?'],
  ['passkeys: true (no relying party)', { passkeys: true }, 'passkeys must be false or { rpId, rpName, origins }'],
  ['an rpId with a scheme', { passkeys: { ...RP, rpId: 'https://example.com' } }, 'passkeys.rpId must be a lower-case domain'],
  ['an rpId with a port', { passkeys: { ...RP, rpId: 'example.com:443' } }, 'passkeys.rpId must be a lower-case domain'],
  ['no origins', { passkeys: { ...RP, origins: [] } }, 'passkeys.origins must be a non-empty array'],
  ['an origin with a path', { passkeys: { ...RP, origins: ['https://example.com/app'] } }, 'passkeys.origins: "https://example.com/app" is not an exact origin'],
  ['an origin with a trailing slash', { passkeys: { ...RP, origins: ['https://example.com/'] } }, 'passkeys.origins: "https://example.com/" is not an exact origin'],
  ['an http origin', { passkeys: { ...RP, origins: ['http://example.com'] } }, 'passkeys.origins: http://example.com must use https'],
  ['an origin of another site', { passkeys: { ...RP, origins: ['https://example.org'] } }, 'passkeys.origins: https://example.org is not on rpId example.com'],
  ['an origin that only ends like the rpId', { passkeys: { ...RP, origins: ['https://badexample.com'] } }, 'passkeys.origins: https://badexample.com is not on rpId example.com'],
  ['max 0', { passkeys: { ...RP, max: 0 } }, 'passkeys.max must be a whole number from 1 to 100'],
  ['passkeys.ttl 0', { passkeys: { ...RP, ttl: 0 } }, 'passkeys.ttl must be a whole number of seconds from 1 to 3600'],
  ['a passkey store without use()', { passkeys: { ...RP, store: { userHandle () {}, generation () {}, add () {}, get () {}, list () {}, remove () {}, removeAll () {} } } }, 'the "passkeys.store" store has no method use()'],
  ['a passkey store without generation()', { passkeys: { ...RP, store: { userHandle () {}, add () {}, get () {}, list () {}, use () {}, remove () {}, removeAll () {} } } }, 'the "passkeys.store" store has no method generation()'],
  ['passwordReset.keepPasskey', { deliver: () => {}, passwordReset: { keepPasskey: true } }, 'unknown option passwordReset.keepPasskey: did you mean passwordReset.keepPasskeys?'],
  ['passwordReset.keepPasskeys not a boolean', { deliver: () => {}, passwordReset: { keepPasskeys: 'yes' } }, 'passwordReset.keepPasskeys must be true or false']
]

for (const [name, options, message] of cases) {
  t.test(`passkey options fail clearly: ${name}`, async (t) => {
    const error = await registrationError({ ...base(), ...options })
    t.equal(error.code, 'FST_PWAUTH_INVALID_OPTION')
    t.ok(error.message.startsWith(`fastify-password-auth: ${message}`), error.message)
  })
}

t.test('accepted: subdomain origins, localhost over http, a lifetime of 1 s; the routes exist only with passkeys on', async (t) => {
  for (const passkeys of [
    { ...RP, origins: ['https://example.com', 'https://app.example.com:8443'] },
    { rpId: 'localhost', rpName: 'Dev', origins: ['http://localhost:3000'] }
  ]) {
    const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
    t.teardown(async () => { await app.close() })
    await app.register(passwordAuth, { ...base(), passkeys: { ...passkeys, ttl: 1 } })
    await app.ready()
    const options = await app.inject({ method: 'POST', url: '/Auth/Passkeys/LoginOptions' })
    t.equal(options.statusCode, 200)
    t.equal(options.json().timeout, 1000)
    t.equal(options.json().rpId, passkeys.rpId)
  }
  const off = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await off.close() })
  await off.register(passwordAuth, base())
  t.equal((await off.inject({ method: 'POST', url: '/Auth/Passkeys/LoginOptions' })).statusCode, 404)
})
