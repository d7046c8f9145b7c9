import t from 'tap'
import { MemoryAccountStore, MemoryMfaStore, MemoryPasskeyStore, type PasswordAuthOptions } from '../../lib/index.js'
import { resolveOptions } from '../../lib/options.js'
import { CHEAP_ARGON2, registrationError, SECRET } from '../helpers/app.js'
import { mfaApp } from '../helpers/mfa.js'
import { expectProblem } from '../helpers/problem.js'

// The flat lifetime and store names of earlier versions, which the HTTP contract (§13–§19) still uses, keep working:
// each is read as its place in its feature's group, with a deprecation warning once per process.

const warnings: Array<Error & { code?: string }> = []
process.on('warning', (warning) => { warnings.push(warning) })

const base = (): PasswordAuthOptions => ({ accounts: new MemoryAccountStore(), jwt: { secret: SECRET }, argon2: CHEAP_ARGON2 })
const deliver = async (): Promise<void> => {}
const passkeys = { rpId: 'localhost', rpName: 'Example', origins: ['http://localhost:3000'] }

t.test('each old flat name sets what its grouped form sets', async (t) => {
  const mfaStore = new MemoryMfaStore()
  const passkeyStore = new MemoryPasskeyStore()
  const flat = resolveOptions({ ...base(), deliver, mfa: true, mfaTtl: 60, mfaStore, passkeys, passkeyTtl: 61, passkeyStore, passwordReset: true, resetTtl: 62 })
  t.equal(flat.mfa?.ttlMs, 60_000, 'mfaTtl: mfa.ttl')
  t.equal(flat.mfa?.store, mfaStore, 'mfaStore: mfa.store')
  t.equal(flat.passkeys?.ttlMs, 61_000, 'passkeyTtl: passkeys.ttl')
  t.equal(flat.passkeys?.store, passkeyStore, 'passkeyStore: passkeys.store')
  t.equal(flat.routes.passwordReset?.ttlMs, 62_000, 'resetTtl: passwordReset.ttl')
  const grouped = resolveOptions({ ...base(), deliver, mfa: { ttl: 60 }, passkeys: { ...passkeys, ttl: 61 }, passwordReset: { ttl: 62 } })
  t.same({ mfa: flat.mfa?.ttlMs, passkeys: flat.passkeys?.ttlMs, reset: flat.routes.passwordReset }, { mfa: grouped.mfa?.ttlMs, passkeys: grouped.passkeys?.ttlMs, reset: grouped.routes.passwordReset })
  t.equal(resolveOptions({ ...base(), mfa: { issuer: 'Shop' }, mfaTtl: 1 }).mfa?.issuer, 'Shop', 'the rest of the group stays')

  const both = resolveOptions({ ...base(), deliver, registration: true, account: { emailChange: true }, verifyTtl: 63 })
  t.equal(both.routes.registration?.ttlMs, 63_000, 'verifyTtl: registration.ttl')
  t.equal(both.account.emailChange?.verifyTtlMs, 63_000, 'and account.verifyTtl, as it always did')
  const registrationOnly = resolveOptions({ ...base(), deliver, registration: { fields: {} }, verifyTtl: 64 })
  t.equal(registrationOnly.routes.registration?.ttlMs, 64_000)
  t.equal(registrationOnly.account.emailChange, undefined, 'does not turn ChangeEmail on')
  const emailChangeOnly = resolveOptions({ ...base(), deliver, account: { emailChange: true }, verifyTtl: 65 })
  t.equal(emailChangeOnly.account.emailChange?.verifyTtlMs, 65_000)
  t.equal(emailChangeOnly.routes.registration, undefined, 'does not turn Register on')

  const given = { ...base(), mfa: true, mfaTtl: 60 }
  resolveOptions(given)
  t.same([given.mfa, given.mfaTtl], [true, 60], 'the host\'s object is left as it was')
})

t.test('a 1-s mfaTtl is a 1-s challenge on LoginMfa', async (t) => {
  const { enable, challenge, loginMfa } = await mfaApp(t, { mfaTtl: 1 })
  const { recoveryCodes } = await enable()
  const expiring = await challenge()
  const realNow = Date.now
  Date.now = () => realNow() + 2_000
  try {
    expectProblem(t, await loginMfa(expiring, recoveryCodes[0]), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'past the 1 s of mfaTtl')
  } finally {
    Date.now = realNow
  }
  t.equal((await loginMfa(await challenge(), recoveryCodes[1])).statusCode, 200, 'within it, the same kind of code passes')
})

t.test('every check of the grouped form applies to the old name', async (t) => {
  const refused: Array<[string, Partial<PasswordAuthOptions>, string]> = [
    ['mfaTtl 0', { mfa: true, mfaTtl: 0 }, 'mfa.ttl must be a whole number of seconds from 1 to 3600'],
    ['mfaStore without its methods', { mfa: true, mfaStore: {} as MemoryMfaStore }, 'mfa.store'],
    ['passkeyTtl above an hour', { passkeys, passkeyTtl: 3601 }, 'passkeys.ttl must be a whole number of seconds from 1 to 3600'],
    ['passkeyStore without its methods', { passkeys, passkeyStore: {} as MemoryPasskeyStore }, 'passkeys.store'],
    ['resetTtl 0', { deliver, passwordReset: true, resetTtl: 0 }, 'passwordReset.ttl must be a whole number of seconds from 1 to 86400'],
    ['verifyTtl above 30 days', { deliver, registration: true, verifyTtl: 30 * 86_400 + 1 }, 'registration.ttl must be a whole number of seconds from 1 to 2592000']
  ]
  for (const [name, options, message] of refused) {
    const error = await registrationError({ ...base(), ...options })
    t.equal(error?.code, 'FST_PWAUTH_INVALID_OPTION', name)
    t.match(error?.message, message, name)
  }
  t.equal(await registrationError({ ...base(), deliver, mfa: true, mfaTtl: 1, passkeys, passkeyTtl: 1, passwordReset: true, resetTtl: 1, registration: true, verifyTtl: 1 }), undefined,
    'each accepts 1 s')
})

t.test('an old name never turns its feature on: given while it is off, it is refused as before the grouping', async (t) => {
  const off: Array<[string, Partial<PasswordAuthOptions>, string]> = [
    ['mfaTtl', { mfaTtl: 60 }, 'mfa: true'],
    ['mfaTtl', { mfa: false, mfaTtl: 60 }, 'mfa: true'],
    ['mfaStore', { mfaStore: new MemoryMfaStore() }, 'mfa: true'],
    ['passkeyTtl', { passkeyTtl: 60 }, 'passkeys: { rpId, rpName, origins }'],
    ['passkeyStore', { passkeys: false, passkeyStore: new MemoryPasskeyStore() }, 'passkeys: { rpId, rpName, origins }'],
    ['resetTtl', { deliver, resetTtl: 60 }, 'passwordReset: true'],
    ['verifyTtl', { deliver, verifyTtl: 60, account: { deletion: true } }, 'registration: true (or account: { emailChange: true })']
  ]
  for (const [name, options, meant] of off) {
    const error = await registrationError({ ...base(), ...options })
    t.equal(error?.message, `fastify-password-auth: ${name} is set, but nothing uses it while its feature is off: did you mean ${meant}?`, JSON.stringify(Object.keys(options)))
  }
})

t.test('an old name beside its new place is refused, naming both', async (t) => {
  const twice: Array<[Partial<PasswordAuthOptions>, string]> = [
    [{ mfa: { ttl: 60 }, mfaTtl: 60 }, 'mfaTtl and mfa.ttl are both set'],
    [{ mfa: { store: new MemoryMfaStore() }, mfaStore: new MemoryMfaStore() }, 'mfaStore and mfa.store are both set'],
    [{ passkeys: { ...passkeys, ttl: 60 }, passkeyTtl: 60 }, 'passkeyTtl and passkeys.ttl are both set'],
    [{ passkeys: { ...passkeys, store: new MemoryPasskeyStore() }, passkeyStore: new MemoryPasskeyStore() }, 'passkeyStore and passkeys.store are both set'],
    [{ deliver, passwordReset: { ttl: 60 }, resetTtl: 60 }, 'resetTtl and passwordReset.ttl are both set'],
    [{ deliver, registration: { ttl: 60 }, verifyTtl: 60 }, 'verifyTtl and registration.ttl are both set'],
    [{ deliver, registration: true, account: { emailChange: true, verifyTtl: 60 }, verifyTtl: 60 }, 'verifyTtl and account.verifyTtl are both set']
  ]
  for (const [options, message] of twice) {
    const error = await registrationError({ ...base(), ...options })
    t.equal(error?.code, 'FST_PWAUTH_INVALID_OPTION', message)
    t.match(error?.message, `fastify-password-auth: ${message}`)
  }
})

t.test('a group\'s own option written at the top is pointed to its group', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ trustDays: 30 }, 'unknown option trustDays: did you mean mfa.trustDays?'],
    [{ trustdays: 30 }, 'unknown option trustdays: did you mean mfa.trustDays?'],
    [{ keepPasskeys: true }, 'unknown option keepPasskeys: did you mean passwordReset.keepPasskeys?'],
    [{ revertTtl: 60 }, 'unknown option revertTtl: did you mean account.revertTtl?'],
    [{ rpId: 'localhost' }, 'unknown option rpId: did you mean passkeys.rpId?'],
    [{ ttl: 60 }, 'unknown option ttl: did you mean passwordReset.ttl, registration.ttl, mfa.ttl or passkeys.ttl?']
  ]
  for (const [options, message] of cases) {
    const error = await registrationError({ ...base(), ...options } as PasswordAuthOptions)
    t.equal(error?.message, `fastify-password-auth: ${message}`)
  }
})

// Last: every test above used each old name, several times.
t.test('each old name warns once per process, with a deprecation code, naming its new place', async (t) => {
  await new Promise((resolve) => setImmediate(resolve))
  const ours = warnings.filter(({ code }) => code?.startsWith('FST_PWAUTH_DEP') === true)
  t.same(ours.map(({ name, code }) => [name, code]).sort(), [1, 2, 3, 4, 5, 6].map((n) => ['DeprecationWarning', `FST_PWAUTH_DEP00${n}`]), 'six, one each')
  const message = (code: string): string | undefined => ours.find((warning) => warning.code === code)?.message
  t.equal(message('FST_PWAUTH_DEP001'), 'fastify-password-auth: the option mfaTtl is deprecated: use mfa: { ttl } instead')
  t.equal(message('FST_PWAUTH_DEP004'), 'fastify-password-auth: the option passkeyStore is deprecated: use passkeys: { store } instead')
  t.match(message('FST_PWAUTH_DEP006'), 'the option verifyTtl is deprecated: use registration: { ttl } for Register\'s link and account: { verifyTtl } for ChangeEmail\'s')
})
