import { Type } from '@sinclair/typebox'
import t, { type Test } from 'tap'
import { hashPassword, MemoryAccountStore, type AccountStore, type AuthEvent, type PasswordAuthOptions } from '../../lib/index.js'
import type { PasswordAuthMessage } from '../../lib/messages/outbox.js'
import { buildTestApp, CHEAP_ARGON2, EMAIL, PASSWORD } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'
import { startRangeServer } from '../helpers/range-server.js'

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))
const NEW = 'grace.hopper@example.com'
const GRACE_PASSWORD = 'grace picks a long passphrase'
const ATTACKER_PASSWORD = 'the attacker knows this one'

/** An app with Register and VerifyEmail on (ada is an active account), whose messages and events the test reads. */
async function registrationApp (t: Test, auth: Partial<PasswordAuthOptions> = {}) {
  const messages: PasswordAuthMessage[] = []
  const events: AuthEvent[] = []
  const built = await buildTestApp(t, {
    auth: { registration: true, passwordReset: true, deliver: (message) => { messages.push(message) }, onEvent: (event) => { events.push(event) }, ...auth }
  })
  const { app } = built
  const register = async (email: unknown, password = GRACE_PASSWORD, extra: Record<string, unknown> = {}) =>
    await app.inject({ method: 'POST', url: '/Auth/Register', payload: { email, password, confirmPassword: password, ...extra } })
  const verify = async (token: unknown, password: unknown = GRACE_PASSWORD) => await app.inject({ method: 'POST', url: '/Auth/VerifyEmail', payload: { token, password } })
  /** Registers and resolves the verification token of the message that follows. */
  const registrationToken = async (email: string, password = GRACE_PASSWORD, extra: Record<string, unknown> = {}): Promise<string> => {
    const before = messages.length
    t.equal((await register(email, password, extra)).statusCode, 202)
    for (let i = 0; i < 100 && messages.length === before; i++) await sleep(5)
    const message = messages.at(-1)
    if (message?.type !== 'verify_email' || messages.length === before) throw new Error(`no verify_email message: ${JSON.stringify(message)}`)
    return message.token!
  }
  return { ...built, messages, events, register, verify, registrationToken }
}

t.test('Register answers the same 202 for a new, a pending, an active and an inactive address, hashing once on every branch', async (t) => {
  const { register, messages, accounts, app, events } = await registrationApp(t)
  accounts.add({ email: 'inactive@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2), active: false })
  const answers = []
  for (const email of [NEW, NEW, EMAIL, 'inactive@example.com']) {
    const hashes = app.passwordAuth.stats().hashes
    const response = await register(email)
    t.equal(app.passwordAuth.stats().hashes, hashes + 1, `${email}: one argon2id hash`)
    const { date, ...headers } = response.headers
    answers.push({ status: response.statusCode, body: response.body, headers })
  }
  t.equal(answers[0]!.status, 202)
  t.equal(answers[0]!.body, '')
  for (const answer of answers.slice(1)) t.same(answer, answers[0], 'byte for byte the same answer')
  await sleep(50)
  t.match(messages, [
    { type: 'verify_email', to: NEW, token: /^[\w-]{22}\.[\w-]{43}$/, expiresAt: Number },
    { type: 'verify_email', to: NEW, token: /^[\w-]{22}\.[\w-]{43}$/ },
    { type: 'account_exists', to: EMAIL }
  ])
  t.equal(messages.length, 3, 'the inactive account\'s address gets nothing')
  t.notOk('token' in messages[2]!, 'account_exists carries no token')
  t.not(messages[0]!.token, messages[1]!.token, 'each registration its own token')
  t.same(events.filter((event) => event.type === 'account.registration_requested').map((event) => 'outcome' in event && event.outcome),
    ['sent', 'sent', 'account_exists', 'inactive_account'])
})

t.test('the body alone is checked first: input rules, confirmation, the whole policy', async (t) => {
  const { register, app } = await registrationApp(t)
  expectProblem(t, await register('not an address'), 400, 'FST_PWAUTH_VALIDATION')
  const mismatch = await app.inject({ method: 'POST', url: '/Auth/Register', payload: { email: NEW, password: GRACE_PASSWORD, confirmPassword: `${GRACE_PASSWORD}!` } })
  expectProblem(t, mismatch, 400, 'FST_PWAUTH_PASSWORD_MISMATCH')
  for (const [password, reasons] of [['short', ['too_short']], ['1qaz2wsx3edc4rfv', ['common']], ['grace.hopper has a passphrase', ['contains_email']]] as const) {
    const weak = await register(NEW, password)
    expectProblem(t, weak, 400, 'FST_PWAUTH_WEAK_PASSWORD')
    t.same(weak.json().reasons, reasons, password)
  }
  expectProblem(t, await register(EMAIL, 'short'), 400, 'FST_PWAUTH_WEAK_PASSWORD', 'a taken address gets the same 400: it depends on the body alone')
  t.equal(app.passwordAuth.stats().hashes, 0, 'no hash for a refused body')
})

t.test('a pending registration is no account; verifying creates it, once', async (t) => {
  const { registrationToken, verify, login, app, events, messages } = await registrationApp(t)
  const token = await registrationToken(NEW)
  t.equal((await login(NEW, GRACE_PASSWORD)).statusCode, 401, 'Login sees an unknown address')
  t.equal((await app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: { email: NEW } })).statusCode, 202)
  await sleep(20)
  t.notOk(messages.some((message) => message.type === 'password_reset'), 'ForgotPassword sends nothing to a pending address')
  const verified = await verify(token)
  t.equal(verified.statusCode, 204)
  t.equal(verified.body, '', 'a verification does not log in')
  t.equal((await login(NEW, GRACE_PASSWORD)).statusCode, 200, 'the registered password logs in')
  t.match(events.find((event) => event.type === 'account.registered'), { email: NEW, accountId: String })
  expectProblem(t, await verify(token), 400, 'FST_PWAUTH_VERIFY_TOKEN_INVALID', 'a used token is dead')
  for (const bad of ['x', 'AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) expectProblem(t, await verify(bad), 400, 'FST_PWAUTH_VERIFY_TOKEN_INVALID')
  expectProblem(t, await verify(''), 400, 'FST_PWAUTH_VALIDATION')
})

t.test('pre-hijacking: an attacker who registers the address first gets nothing from the owner\'s account', async (t) => {
  const { registrationToken, verify, login, messages } = await registrationApp(t)
  const attackers = await registrationToken(NEW, ATTACKER_PASSWORD)
  const owners = await registrationToken(NEW, GRACE_PASSWORD)
  t.equal((await verify(owners)).statusCode, 204, 'the owner verifies from the mailbox only the owner reads')
  expectProblem(t, await verify(attackers, ATTACKER_PASSWORD), 400, 'FST_PWAUTH_VERIFY_TOKEN_INVALID', 'the first verified wins; the others die')
  t.equal((await login(NEW, ATTACKER_PASSWORD)).statusCode, 401, 'the attacker\'s password opens nothing')
  t.equal((await login(NEW, GRACE_PASSWORD)).statusCode, 200)
  t.equal(messages.filter((message) => message.type === 'verify_email').length, 2, 'the attacker\'s link went to the owner\'s mailbox, not to the attacker')
})

t.test('issue 37: a stranger spends the address\'s budget with 5 Registers; any link in her mailbox lets the owner choose her own password', async (t) => {
  const { register, verify, login, messages, accounts, events } = await registrationApp(t)
  for (let i = 0; i < 5; i++) t.equal((await register(NEW, ATTACKER_PASSWORD)).statusCode, 202, `the stranger's Register ${i + 1}`)
  t.equal((await register(NEW, GRACE_PASSWORD)).statusCode, 202, 'the owner registers')
  await sleep(50)
  const links = messages.filter((message) => message.type === 'verify_email')
  t.equal(links.length, 5, 'the stranger spent the address\'s verify_email budget: the owner\'s Register sent nothing')
  t.equal((await verify(links.at(-1)!.token!, GRACE_PASSWORD)).statusCode, 204, 'the owner opens the newest link, his, with her password: her sign-up is not delayed')
  t.match(await accounts.findByEmail(NEW), { email: NEW, active: true })
  t.equal((await login(NEW, GRACE_PASSWORD)).statusCode, 200, 'her password signs in')
  expectProblem(t, await login(NEW, ATTACKER_PASSWORD), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'the stranger\'s password never reached the account')
  for (const { token } of links.slice(0, -1)) expectProblem(t, await verify(token, ATTACKER_PASSWORD), 400, 'FST_PWAUTH_VERIFY_TOKEN_INVALID', 'his other links died')
  t.equal(events.filter((event) => event.type === 'account.registered').length, 1)
})

t.test('VerifyEmail sets the password sent with it: one argon2 hash and no verification, whether it is the one of Register or not', async (t) => {
  const { registrationToken, verify, login, app } = await registrationApp(t)
  for (const [email, password] of [[NEW, GRACE_PASSWORD], ['changed.her.mind@example.com', 'another passphrase, chosen at the link']] as const) {
    const token = await registrationToken(email, GRACE_PASSWORD)
    const { hashes, verifications } = app.passwordAuth.stats()
    t.equal((await verify(token, password)).statusCode, 204, email)
    t.equal(app.passwordAuth.stats().hashes, hashes + 1, `${email}: one hash`)
    t.equal(app.passwordAuth.stats().verifications, verifications, `${email}: nothing verified against the registration: the time says nothing of it`)
    t.equal((await login(email, password)).statusCode, 200, `${email}: the password sent with the link signs in`)
  }
  expectProblem(t, await login('changed.her.mind@example.com', GRACE_PASSWORD), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'the one typed at Register does not')
})

t.test('a password the policy refuses is a 400 WEAK_PASSWORD and keeps the link; a dead link is refused before any hash', async (t) => {
  const { registrationToken, verify, login, app, accounts } = await registrationApp(t)
  const token = await registrationToken(NEW)
  for (const [password, reasons] of [['short', ['too_short']], ['1qaz2wsx3edc4rfv', ['common']], ['grace.hopper has a passphrase', ['contains_email']]] as const) {
    const weak = await verify(token, password)
    expectProblem(t, weak, 400, 'FST_PWAUTH_WEAK_PASSWORD', password)
    t.same(weak.json().reasons, reasons, password)
  }
  t.equal(await accounts.findByEmail(NEW), null, 'no account yet')
  t.equal(app.passwordAuth.stats().hashes, 1, 'only Register\'s hash: a refused password is not hashed')
  t.equal((await verify(token)).statusCode, 204, 'the link still works')
  t.equal((await login(NEW, GRACE_PASSWORD)).statusCode, 200)
  const hashes = app.passwordAuth.stats().hashes
  expectProblem(t, await verify('AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'short'), 400, 'FST_PWAUTH_VERIFY_TOKEN_INVALID', 'an unknown link, whatever the password')
  expectProblem(t, await verify(token, GRACE_PASSWORD), 400, 'FST_PWAUTH_VERIFY_TOKEN_INVALID', 'a used link')
  t.equal(app.passwordAuth.stats().hashes, hashes, 'no hash for a dead link')
  expectProblem(t, await app.inject({ method: 'POST', url: '/Auth/VerifyEmail', payload: { token } }), 400, 'FST_PWAUTH_VALIDATION', 'no password: a 400 of the input rules')
})

t.test('a breached password at VerifyEmail: 400 WEAK_PASSWORD, reason breached, and the link still works', async (t) => {
  const range = await startRangeServer(t)
  const leaked = 'a long passphrase that leaked in 2019'
  range.breach(leaked)
  const { registrationToken, verify, login } = await registrationApp(t, { breachedPasswords: { rangeUrl: range.url } })
  const token = await registrationToken(NEW)
  const breached = await verify(token, leaked)
  expectProblem(t, breached, 400, 'FST_PWAUTH_WEAK_PASSWORD')
  t.same(breached.json().reasons, ['breached'])
  t.equal((await verify(token)).statusCode, 204)
  t.equal((await login(NEW, GRACE_PASSWORD)).statusCode, 200)
})

t.test('races: 20 verifications of one token give one account; two pending registrations of one address verified at once give one', async (t) => {
  const { registrationToken, verify, accounts, login } = await registrationApp(t)
  const token = await registrationToken(NEW)
  const passwords = Array.from({ length: 20 }, (_, i) => `racing passphrase number ${i}`)
  const statuses = await Promise.all(passwords.map(async (password) => (await verify(token, password)).statusCode))
  t.equal(statuses.filter((status) => status === 204).length, 1)
  t.equal(statuses.filter((status) => status === 400).length, 19)
  const winner = statuses.indexOf(204)
  t.equal((await login(NEW, passwords[winner]!)).statusCode, 200, 'the winner\'s password was stored')
  t.equal((await login(NEW, passwords[(winner + 1) % passwords.length]!)).statusCode, 401, 'and no loser\'s')
  const [first, second] = [await registrationToken('race@example.com', 'the first racing passphrase'), await registrationToken('race@example.com', 'the second racing passphrase')]
  const both = await Promise.all([verify(first, 'the first racing passphrase'), verify(second, 'the second racing passphrase')])
  t.same(both.map((response) => response.statusCode).sort(), [204, 400])
  t.ok(await accounts.findByEmail('race@example.com'))
})

t.test('an expired verification link is dead', async (t) => {
  const { registrationToken, verify } = await registrationApp(t, { registration: { ttl: 1 } })
  const token = await registrationToken(NEW)
  await sleep(1100)
  expectProblem(t, await verify(token), 400, 'FST_PWAUTH_VERIFY_TOKEN_INVALID')
})

t.test('registration fields of the host: validated like the built-in ones, kept with the registration, on the account', async (t) => {
  const { register, registrationToken, verify, accounts } = await registrationApp(t, {
    registration: { fields: { displayName: Type.String({ minLength: 1, maxLength: 40 }), acceptedTerms: Type.Literal(true) } }
  })
  const missing = await register(NEW)
  expectProblem(t, missing, 400, 'FST_PWAUTH_VALIDATION')
  t.match(missing.json().errors, [{ pointer: /\/(displayName|acceptedTerms)/ }])
  expectProblem(t, await register(NEW, GRACE_PASSWORD, { displayName: 42, acceptedTerms: true }), 400, 'FST_PWAUTH_VALIDATION', 'no coercion')
  expectProblem(t, await register(NEW, GRACE_PASSWORD, { displayName: 'Grace', acceptedTerms: false }), 400, 'FST_PWAUTH_VALIDATION')
  const token = await registrationToken(NEW, GRACE_PASSWORD, { displayName: 'Grace', acceptedTerms: true, ignored: 'x' })
  t.equal((await verify(token)).statusCode, 204)
  t.match(await accounts.findByEmail(NEW), { email: NEW, displayName: 'Grace', acceptedTerms: true, active: true, credentialVersion: 0 })
  t.notOk('ignored' in (await accounts.findByEmail(NEW))!, 'unknown fields are not stored')
})

t.test('each message type has its budget (account_exists once an hour); Register is shed with 503 when hashing is saturated', async (t) => {
  const { register, messages, app, events } = await registrationApp(t, { mailLimit: 1 })
  t.equal((await register(EMAIL)).statusCode, 202)
  t.equal((await app.inject({ method: 'POST', url: '/Auth/ForgotPassword', payload: { email: EMAIL } })).statusCode, 202)
  t.equal((await register(EMAIL)).statusCode, 202)
  await sleep(50)
  t.same(messages.map((message) => message.type), ['account_exists', 'password_reset'], 'account_exists did not spend password_reset\'s budget of 1')
  t.match(events.filter((event) => event.type === 'account.registration_requested').map((event) => 'outcome' in event && event.outcome), ['account_exists', 'limited'])

  const saturated = await registrationApp(t, { hashing: { threads: 1, maxQueue: 0 } })
  const statuses = await Promise.all(Array.from({ length: 12 }, async (_, i) => (await saturated.register(`flood${i}@example.com`)).statusCode))
  t.ok(statuses.includes(503), `shed: ${statuses.join(',')}`)
  t.ok(statuses.every((status) => status === 202 || status === 503))
})

t.test('options: registration needs deliver and a store that creates accounts; field names are checked', async (t) => {
  await t.rejects(buildTestApp(t, { auth: { registration: true } }), /registration needs deliver/)
  const noCreate: AccountStore = { findByEmail: async () => null, findById: async () => null, updatePasswordHash: async () => false }
  await t.rejects(buildTestApp(t, { auth: { registration: true, deliver: () => {}, accounts: noCreate } }), /registration needs an account store with create\(\)/)
  await t.rejects(buildTestApp(t, { auth: { registration: { fields: { email: Type.String() } }, deliver: () => {} } }), /registration\.fields\.email/)
  await t.rejects(buildTestApp(t, { auth: { registration: { fields: { name: 'string' as unknown as object } }, deliver: () => {} } }), /must be a TypeBox schema/)
  await t.rejects(buildTestApp(t, { auth: { registration: { fields: { name: { type: 'string' } } }, deliver: () => {} } }), /registration\.fields\.name must be a TypeBox schema/,
    'a plain JSON Schema fails at registration, not at ready()')
  await t.rejects(buildTestApp(t, { auth: { registration: { ttl: 0 }, deliver: () => {} } }), /registration\.ttl must be/)
  const { app } = await buildTestApp(t)
  t.equal((await app.inject({ method: 'POST', url: '/Auth/Register', payload: {} })).statusCode, 404, 'off by default')
  t.ok(new MemoryAccountStore().create, 'the memory store creates accounts')
})
