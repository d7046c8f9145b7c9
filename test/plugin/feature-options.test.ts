import Fastify from 'fastify'
import t from 'tap'
import passwordAuth, {
  MemoryAccountStore, MemoryActivityStore, MemoryMfaStore, MemoryOneTimeTokenStore, MemoryPasskeyStore, MemoryTrustedDeviceStore, type PasswordAuthOptions
} from '../../lib/index.js'
import { CHEAP_ARGON2, PLUGIN_TIMEOUT_MS, registrationError, SECRET } from '../helpers/app.js'

// An option that only a feature reads, given while that feature is off, would never be used (a store never called, a
// lifetime never applied): registration refuses it, naming what was probably meant.

const base = (): PasswordAuthOptions => ({ accounts: new MemoryAccountStore(), jwt: { secret: SECRET }, argon2: CHEAP_ARGON2 })
const deliver = async (): Promise<void> => {}
const passkeys = { rpId: 'localhost', rpName: 'Example', origins: ['http://localhost:3000'] }

const cases: Array<[string, Partial<PasswordAuthOptions>, Partial<PasswordAuthOptions>, string]> = [
  // [option, given without its feature, given with it, what the message suggests]
  ['mfa.trustedDevices', { mfa: { trustedDevices: new MemoryTrustedDeviceStore() } }, { mfa: { trustDays: 30, trustedDevices: new MemoryTrustedDeviceStore() } },
    'did you mean mfa: { trustDays: 30, trustedDevices }?'],
  ['passwordReset.keepPasskeys', { passwordReset: { keepPasskeys: true }, deliver }, { passkeys }, 'did you mean passkeys: { rpId, rpName, origins }?'],
  ['account.verifyTtl', { account: { verifyTtl: 600 } }, { account: { verifyTtl: 600, emailChange: true }, deliver }, 'did you mean account.emailChange: true?'],
  ['account.revertTtl', { account: { revertTtl: 600 } }, { account: { revertTtl: 600, emailChange: true }, deliver }, 'did you mean account.emailChange: true?'],
  ['account.beforeDelete', { account: { beforeDelete: () => undefined } }, { account: { beforeDelete: () => undefined, deletion: true } }, 'did you mean account.deletion: true?'],
  ['account.exportData', { account: { exportData: () => ({}) } }, { account: { exportData: () => ({}), export: true } }, 'did you mean account.export: true?'],
  ['oneTimeTokens', { oneTimeTokens: new MemoryOneTimeTokenStore() }, { mfa: true }, 'did you mean one of passwordReset, registration, mfa, passkeys or account.emailChange'],
  ['mailLimit', { mailLimit: 3 }, { deliver }, 'did you mean deliver?']
]

for (const [option, without, withFeature, meant] of cases) {
  t.test(`${option} without its feature is refused at registration; with it, accepted`, async (t) => {
    const error = await registrationError({ ...base(), ...without })
    t.equal(error?.code, 'FST_PWAUTH_INVALID_OPTION')
    t.match(error?.message, `fastify-password-auth: ${option} is set, but nothing uses it while its feature is off: ${meant}`)
    const merged = { ...base(), ...without, ...withFeature }
    t.equal(await registrationError(merged), undefined, 'with the feature on, it registers')
  })
}

t.test('the options of a feature that is on, and the defaults, are not refused', async (t) => {
  t.equal(await registrationError({ ...base(), admin: { activity: new MemoryActivityStore() } }), undefined, 'admin.activity: admin is always there')
  t.equal(await registrationError({ ...base(), mfa: { trustDays: 0 } }), undefined, 'trust off without a store')
  t.equal(await registrationError({ ...base(), oneTimeTokens: new MemoryOneTimeTokenStore(), account: { emailChange: true }, deliver }), undefined, 'emailChange keeps its links there')
})

// A feature's own lifetime and store sit in its group: giving them is turning the feature on, so none can be given while it is off.
t.test('a group with its lifetime or store turns its feature on, and an old flat name does not', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(passwordAuth, {
    ...base(),
    deliver,
    mfa: { ttl: 60, store: new MemoryMfaStore() },
    passkeys: { ...passkeys, ttl: 60, store: new MemoryPasskeyStore() },
    passwordReset: { ttl: 60 },
    registration: { ttl: 60 }
  })
  await app.ready()
  for (const url of ['/Auth/LoginMfa', '/Auth/Passkeys/LoginOptions', '/Auth/ForgotPassword', '/Auth/Register']) {
    t.not((await app.inject({ method: 'POST', url, payload: {} })).statusCode, 404, `${url} is on`)
  }
  const flatWithout = await registrationError({ ...base(), mfaTtl: 60 })
  t.equal(flatWithout?.message, 'fastify-password-auth: mfaTtl is set, but nothing uses it while its feature is off: did you mean mfa: true?',
    'an old flat name (option-aliases.test.ts) does not turn its feature on')
})
