import t from 'tap'
import { buildTestApp, changeBody, EMAIL, NEW_PASSWORD, PASSWORD } from '../helpers/app.js'

t.test('a change answers 204 with no body and no-store', async (t) => {
  const { changePassword } = await buildTestApp(t)
  const response = await changePassword(changeBody())
  t.equal(response.statusCode, 204)
  t.equal(response.body, '')
  t.equal(response.headers['cache-control'], 'no-store')
})

t.test('after a change the new password works and the old one does not', async (t) => {
  const { changePassword, login } = await buildTestApp(t)
  t.equal((await changePassword(changeBody({ email: ' ADA@example.com ' }))).statusCode, 204)
  t.equal((await login(EMAIL, PASSWORD)).statusCode, 401)
  t.equal((await login(EMAIL, NEW_PASSWORD)).statusCode, 200)
})

t.test('a change kills every token issued before it, and later tokens work', async (t) => {
  const { changePassword, token, me } = await buildTestApp(t)
  const before = [await token(), await token()]
  for (const old of before) t.equal((await me(old)).statusCode, 200)
  t.equal((await changePassword(changeBody())).statusCode, 204)
  for (const old of before) {
    const response = await me(old)
    t.equal(response.statusCode, 401)
    t.equal(response.json().code, 'FST_PWAUTH_TOKEN_INVALID')
  }
  const fresh = await token(EMAIL, NEW_PASSWORD)
  const response = await me(fresh)
  t.equal(response.statusCode, 200)
  t.equal(response.json().credentialVersion, 1)
})

t.test('the change advances the credential version and stores an argon2id hash', async (t) => {
  const { changePassword, accounts, ada } = await buildTestApp(t)
  await changePassword(changeBody())
  const stored = await accounts.findByEmail(EMAIL)
  t.equal(stored?.credentialVersion, 1)
  t.match(stored?.passwordHash, /^\$argon2id\$v=19\$m=1024,t=1,p=1\$/)
  t.not(stored?.passwordHash, ada.passwordHash)
})

t.test('confirmNewPassword must equal newPassword exactly', async (t) => {
  const { changePassword, app } = await buildTestApp(t)
  for (const confirm of [`${NEW_PASSWORD} `, NEW_PASSWORD.toUpperCase(), NEW_PASSWORD.normalize('NFD') + '\u0301']) {
    const response = await changePassword(changeBody({ confirmNewPassword: confirm }))
    t.equal(response.statusCode, 400)
    t.equal(response.json().code, 'FST_PWAUTH_PASSWORD_MISMATCH')
  }
  t.equal(app.passwordAuth.stats().verifications, 0, 'checked before any password verification')
})

t.test('the policy rejects weak new passwords with reasons, before verifying anything', async (t) => {
  const { changePassword, app, login } = await buildTestApp(t)
  const weak = async (newPassword: string, extra: Record<string, unknown> = {}) => {
    const response = await changePassword(changeBody({ newPassword, confirmNewPassword: newPassword, ...extra }))
    t.equal(response.statusCode, 400, JSON.stringify(newPassword).slice(0, 30))
    t.equal(response.json().code, 'FST_PWAUTH_WEAK_PASSWORD')
    return response.json().reasons
  }
  t.same(await weak('fourteen chars'), ['too_short'])
  t.same(await weak('x'.repeat(129)), ['too_long'])
  t.same(await weak(PASSWORD), ['same_as_current'])
  t.same(await weak(PASSWORD.normalize('NFD')), ['same_as_current'])
  t.same(await weak('ada'), ['too_short'])
  t.equal(app.passwordAuth.stats().verifications, 0)
  t.equal((await login()).statusCode, 200, 'the password did not change')
})

t.test('the policy counts code points, not UTF-16 units, after NFC', async (t) => {
  const { changePassword } = await buildTestApp(t)
  const emoji15 = '\u{1F600}'.repeat(15)
  t.equal((await changePassword(changeBody({ newPassword: emoji15, confirmNewPassword: emoji15 }))).statusCode, 204, '15 code points, 30 UTF-16 units')
})

t.test('a new password containing the e-mail local part (4+ characters) is refused', async (t) => {
  const { changePassword, accounts } = await buildTestApp(t)
  const { hashPassword } = await import('../../lib/index.js')
  accounts.add({ email: 'margaret@example.com', passwordHash: await hashPassword(PASSWORD, { memoryCost: 1024, timeCost: 1 }) })
  const newPassword = 'hello MARGARET it is me again'
  const response = await changePassword({ email: 'margaret@example.com', currentPassword: PASSWORD, newPassword, confirmNewPassword: newPassword })
  t.equal(response.statusCode, 400)
  t.same(response.json().reasons, ['contains_email'])
})

t.test('a local part under 4 characters may appear in the new password', async (t) => {
  const { changePassword } = await buildTestApp(t)
  const newPassword = 'ADA writes long passphrases'
  t.equal((await changePassword(changeBody({ newPassword, confirmNewPassword: newPassword }))).statusCode, 204)
})

t.test('policy lengths and a custom check are options', async (t) => {
  const checked: Array<[string, string]> = []
  const { changePassword } = await buildTestApp(t, {
    auth: {
      passwordPolicy: {
        minLength: 8,
        maxLength: 20,
        check: async (password, { email }) => { checked.push([password, email]); return !password.includes('123') }
      }
    }
  })
  const attempt = async (newPassword: string) => await changePassword(changeBody({ newPassword, confirmNewPassword: newPassword }))
  t.same((await attempt('short')).json().reasons, ['too_short'])
  t.same((await attempt('x'.repeat(21))).json().reasons, ['too_long'])
  t.same(checked, [], 'the custom check is not asked about a password of the wrong length')
  t.same((await attempt('river stone 123')).json().reasons, ['rejected'], 'not on the built-in list, refused by the check')
  t.same(checked, [['river stone 123', EMAIL]], 'the check got the NFC password and the normalised e-mail')
  t.equal((await attempt('eight ok')).statusCode, 204)
})

t.test('a custom check that fails makes the change fail closed with 503', async (t) => {
  const { changePassword, login } = await buildTestApp(t, {
    auth: { passwordPolicy: { check: async () => { throw new Error('breach service down') } } }
  })
  const response = await changePassword(changeBody())
  t.equal(response.statusCode, 503)
  t.equal(response.json().code, 'FST_PWAUTH_UNAVAILABLE')
  t.equal(response.headers['retry-after'], '1')
  t.notMatch(response.body, /breach service/, 'no internal error text')
  t.equal((await login()).statusCode, 200, 'the password did not change')
})

t.test('a wrong current password, an unknown e-mail or an inactive account get the login 401', async (t) => {
  const { changePassword, accounts, ada, login } = await buildTestApp(t)
  const wrong = await changePassword(changeBody({ currentPassword: 'not the current password' }))
  const unknown = await changePassword(changeBody({ email: 'nobody@example.com' }))
  accounts.setActive(ada.id, false)
  const inactive = await changePassword(changeBody())
  const loginFailure = await login('nobody@example.com', PASSWORD)
  for (const response of [wrong, unknown, inactive]) {
    t.equal(response.statusCode, 401)
    t.equal(response.body, loginFailure.body, 'same body as a failed login')
    t.equal(response.headers['www-authenticate'], loginFailure.headers['www-authenticate'])
  }
  accounts.setActive(ada.id, true)
  t.equal((await login()).statusCode, 200, 'nothing changed')
})

t.test('of concurrent changes with the right current password exactly one wins', async (t) => {
  const { changePassword, login, accounts, ada } = await buildTestApp(t)
  const candidates = Array.from({ length: 4 }, (_, i) => `concurrent new passphrase number ${i}`)
  const responses = await Promise.all(candidates.map(async (newPassword) =>
    await changePassword(changeBody({ newPassword, confirmNewPassword: newPassword }))))
  const statuses = responses.map((response) => response.statusCode)
  t.equal(statuses.filter((status) => status === 204).length, 1, `one 204 in ${statuses.join(',')}`)
  t.equal(statuses.filter((status) => status === 401).length, 3, 'the others get 401')
  const winner = candidates[statuses.indexOf(204)]!
  t.equal((await accounts.findById(ada.id))?.credentialVersion, 1, 'the version advanced once')
  for (const candidate of candidates) {
    t.equal((await login(EMAIL, candidate)).statusCode, candidate === winner ? 200 : 401)
  }
})

t.test('a change runs one verification and one hash', async (t) => {
  const { changePassword, app } = await buildTestApp(t)
  await changePassword(changeBody())
  t.match(app.passwordAuth.stats(), { verifications: 1, hashes: 1, shed: 0 })
})
