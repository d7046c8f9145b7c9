import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import t from 'tap'
import passwordAuth, { MemoryAccountStore, MemorySessionStore, type PasswordAuthOptions } from '../../lib/index.js'
import { createCommonPasswordCheck, foldPassword, isCommonPassword, loadCommonPasswords } from '../../lib/password/common-passwords.js'
import { buildTestApp, changeBody, CHEAP_ARGON2, PLUGIN_TIMEOUT_MS, SECRET } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

// Both are on widely used lists of breached passwords, and 15+ code points: the default policy's lengths.
const BREACHED = ['123456789987654321', '1qaz2wsx3edc4rfv']

const change = (newPassword: string) => changeBody({ newPassword, confirmNewPassword: newPassword })

t.test('the built-in list holds the breached examples, folded', async (t) => {
  for (const password of BREACHED) {
    t.ok(isCommonPassword(password), password)
    t.ok(isCommonPassword(password.toUpperCase()), `${password} in upper case`)
  }
  t.ok(isCommonPassword('PassWord'), 'a short entry is kept: minLength can be as low as 1')
  t.ok(isCommonPassword('asdfjkl\u037E'), 'GREEK QUESTION MARK is ; after NFC (asdfjkl; is on the list)')
  t.notOk(isCommonPassword('asdfjkl:'))
  t.notOk(isCommonPassword(randomBytes(16).toString('base64url')), 'a random password is not')
  t.equal(loadCommonPasswords(), loadCommonPasswords(), 'loaded once')
})

t.test('the list and the candidate are compared after NFC and toLowerCase()', async (t) => {
  const isCommon = createCommonPasswordCheck(['Crème Brûlée 2024'])
  t.ok(isCommon('crème brûlée 2024'))
  t.ok(isCommon('CRÈME BRÛLÉE 2024'.normalize('NFD')), 'decomposed and upper case')
  t.notOk(isCommon('creme brulee 2024'), 'accents still count')
  t.equal(foldPassword('ÅNGSTRÖM'.normalize('NFD')), 'ångström')
})

t.test('ChangePassword refuses a common password with reason common', async (t) => {
  const { changePassword, app, login } = await buildTestApp(t)
  for (const password of BREACHED) {
    for (const candidate of [password, password.toUpperCase()]) {
      const problem = expectProblem(t, await changePassword(change(candidate)), 400, 'FST_PWAUTH_WEAK_PASSWORD', candidate)
      t.same(problem.reasons, ['common'], candidate)
    }
  }
  t.equal(app.passwordAuth.stats().verifications, 0, 'refused before any password verification')
  t.equal((await login()).statusCode, 200, 'the password did not change')
})

t.test('a decomposed (NFD) common password is refused too', async (t) => {
  // The list is ASCII, so NFC matters where a code point decomposes to ASCII: U+037E is ; after NFC.
  const { changePassword } = await buildTestApp(t, { auth: { passwordPolicy: { minLength: 8 } } })
  for (const candidate of ['asdfjkl\u037E', 'ASDFJKL\u037E', 'asdfjkl;']) {
    const problem = expectProblem(t, await changePassword(change(candidate)), 400, 'FST_PWAUTH_WEAK_PASSWORD', candidate)
    t.same(problem.reasons, ['common'], candidate)
  }
})

t.test('a strong random password is accepted', async (t) => {
  const { changePassword } = await buildTestApp(t)
  const strong = randomBytes(18).toString('base64url')
  t.equal((await changePassword(change(strong))).statusCode, 204)
})

t.test('the list only judges passwords of acceptable length', async (t) => {
  const { changePassword } = await buildTestApp(t)
  const problem = expectProblem(t, await changePassword(change('password')), 400, 'FST_PWAUTH_WEAK_PASSWORD')
  t.same(problem.reasons, ['too_short'], 'too short, not common as well')
})

t.test('passwordPolicy.common: false turns the list off', async (t) => {
  const { changePassword } = await buildTestApp(t, { auth: { passwordPolicy: { common: false } } })
  t.equal((await changePassword(change('123456789987654321'))).statusCode, 204)
})

t.test('passwordPolicy.common: true is the default, said out loud', async (t) => {
  const { changePassword } = await buildTestApp(t, { auth: { passwordPolicy: { common: true } } })
  t.same((await changePassword(change('1qaz2wsx3edc4rfv'))).json().reasons, ['common'])
})

t.test('the host check still runs: after the list passes, and when it refuses', async (t) => {
  const checked: string[] = []
  const { changePassword } = await buildTestApp(t, {
    auth: { passwordPolicy: { check: (password) => { checked.push(password); return !password.startsWith('host refuses') } } }
  })
  t.equal((await changePassword(change('a passphrase the list does not know'))).statusCode, 204)
  t.same(checked, ['a passphrase the list does not know'], 'asked once the list passed')
  t.same((await changePassword(change('host refuses this passphrase'))).json().reasons, ['rejected'])
  t.same((await changePassword(change('123456789987654321'))).json().reasons, ['common'], 'the host accepts it, the list does not')
  t.same(checked.slice(1), ['host refuses this passphrase', '123456789987654321'], 'the check also ran for the common one')
})

t.test('both the list and the host check can refuse the same password', async (t) => {
  const { changePassword } = await buildTestApp(t, { auth: { passwordPolicy: { check: () => false } } })
  t.same((await changePassword(change('1QAZ2WSX3EDC4RFV'))).json().reasons, ['common', 'rejected'])
})

t.test('passwordPolicy.common must be a boolean', async (t) => {
  for (const common of ['yes', 1, null]) {
    const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
    t.teardown(async () => { await app.close() })
    const options = {
      accounts: new MemoryAccountStore(),
      sessions: new MemorySessionStore(),
      jwt: { secret: SECRET },
      argon2: CHEAP_ARGON2,
      passwordPolicy: { common }
    } as unknown as PasswordAuthOptions
    const error: Error & { code?: string } = await app.register(passwordAuth, options).ready().then(
      () => { throw new Error('registration did not fail') },
      (err: Error) => err
    )
    t.equal(error.code, 'FST_PWAUTH_INVALID_OPTION', String(common))
    t.equal(error.message, 'fastify-password-auth: passwordPolicy.common must be true or false (the built-in list of common passwords)')
  }
})

t.test('a misspelt common option names it', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  const options = {
    accounts: new MemoryAccountStore(),
    sessions: new MemorySessionStore(),
    jwt: { secret: SECRET },
    passwordPolicy: { commn: false }
  } as unknown as PasswordAuthOptions
  await t.rejects(async () => await app.register(passwordAuth, options).ready(), { message: /unknown option passwordPolicy\.commn: did you mean passwordPolicy\.common\?/ })
})
