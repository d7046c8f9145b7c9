import t from 'tap'
import { hashPassword, MemoryOneTimeTokenStore } from '../../lib/index.js'
import { CHEAP_ARGON2, EMAIL, NEW_PASSWORD, PASSWORD } from '../helpers/app.js'
import { accountApp, sleep } from '../helpers/account.js'
import { currentStep, totpCode } from '../helpers/mfa.js'
import { expectProblem } from '../helpers/problem.js'

const TEN_MINUTES = 600_000

t.test('DeleteAccount takes the password (Keycloak #26925): a token alone, fresh or old, cannot delete; the password stands for a recent authentication', async (t) => {
  const { post, token, accounts, ada, login, messages } = await accountApp(t)
  const fresh = await token()
  expectProblem(t, await post('/DeleteAccount', fresh), 400, 'FST_PWAUTH_MALFORMED_BODY', 'no body (a JSON body now)')
  expectProblem(t, await post('/DeleteAccount', fresh, {}), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'no password')
  expectProblem(t, await post('/DeleteAccount', fresh, { password: 'a wrong password' }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'a wrong one')
  expectProblem(t, await post('/DeleteAccount', fresh, { password: 42 }), 400, 'FST_PWAUTH_VALIDATION')
  expectProblem(t, await post('/DeleteAccount', undefined, { password: PASSWORD }), 401, 'FST_PWAUTH_TOKEN_MISSING')
  t.not(await accounts.findById(ada.id), null)
  t.notOk(messages.some((m) => m.type === 'account_deleted'))
  // The failures count on the e-mail's counter with Login's: 2 above (the 400s are none), 3 more block it.
  for (let i = 0; i < 3; i++) expectProblem(t, await post('/DeleteAccount', fresh, { password: 'wrong again' }), 401, 'FST_PWAUTH_INVALID_CREDENTIALS')
  expectProblem(t, await login(EMAIL, PASSWORD), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'Login is blocked')
  expectProblem(t, await post('/DeleteAccount', fresh, { password: PASSWORD }), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'and so is DeleteAccount')
  t.not(await accounts.findById(ada.id), null)
})

t.test('DeleteAccount: a session whose last proof is old deletes with the password, no Reauthenticate', async (t) => {
  const { post, clock, token, accounts, ada } = await accountApp(t)
  clock.advance(-TEN_MINUTES)
  const old = await token()
  clock.advance(TEN_MINUTES)
  t.equal((await post('/DeleteAccount', old, { password: PASSWORD })).statusCode, 204)
  t.equal(await accounts.findById(ada.id), null)
})

t.test('DeleteAccount removes the account and every session and token; the address is unknown and open again', async (t) => {
  const { post, token, tokens, login, me, refresh, accounts, ada, sessions, message, events, app } = await accountApp(t, {
    registration: true
  })
  const other = await tokens()
  const access = await token()
  t.equal((await post('/ForgotPassword', undefined, { email: EMAIL })).statusCode, 202)
  const reset = await message('password_reset', EMAIL)
  t.equal((await post('/ChangeEmail', access, { newEmail: 'pending@example.net', password: PASSWORD })).statusCode, 202)
  const change = await message('email_change', 'pending@example.net')
  // A few wrong passwords on the address's counter.
  for (let i = 0; i < 3; i++) t.equal((await login(EMAIL, 'wrong password, wrong')).statusCode, 401)

  t.equal((await post('/DeleteAccount', access, { password: PASSWORD })).statusCode, 204)
  t.equal(await accounts.findById(ada.id), null)
  t.equal((await me(access)).statusCode, 401)
  t.equal((await me(other.accessToken)).statusCode, 401)
  t.equal((await refresh(other.refreshToken)).statusCode, 401)
  t.same(await sessions.list(ada.id), [])
  expectProblem(t, await login(EMAIL, PASSWORD), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'the address is unknown')
  expectProblem(t, await post('/ResetPassword', undefined, { token: reset.token, newPassword: 'a fresh passphrase 42', confirmNewPassword: 'a fresh passphrase 42' }), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID')
  expectProblem(t, await post('/VerifyEmailChange', undefined, { token: change.token }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID')
  t.equal((await message('account_deleted', EMAIL)).accountId, ada.id, 'the address hears of it')
  t.equal((await app.passwordAuth.admin.activity(ada.id)).length, 0, 'its activity went with it')
  t.ok(events.some((e) => e.type === 'account.deleted'))
  // Registration is open again for the address.
  t.equal((await post('/Register', undefined, { email: EMAIL, password: 'a fresh passphrase 42', confirmPassword: 'a fresh passphrase 42' })).statusCode, 202)
  const verify = await message('verify_email', EMAIL)
  t.equal((await post('/VerifyEmail', undefined, { token: verify.token, password: 'a fresh passphrase 42' })).statusCode, 204)
  t.equal((await login(EMAIL, 'a fresh passphrase 42')).statusCode, 200, 'a new account, starting with a clean counter')
})

t.test('DeleteAccount: the host\'s beforeDelete may refuse, with its detail; nothing is removed', async (t) => {
  const seen: string[] = []
  const { post, token, accounts, ada, me } = await accountApp(t, {
    account: { deletion: true, beforeDelete: async (account) => { seen.push(account.email); return { refuse: 'Cancel your subscription first.' } } }
  })
  const access = await token()
  const problem = expectProblem(t, await post('/DeleteAccount', access, { password: PASSWORD }), 409, 'FST_PWAUTH_DELETE_REFUSED')
  t.equal(problem.detail, 'Cancel your subscription first.')
  t.same(seen, [EMAIL])
  t.not(await accounts.findById(ada.id), null)
  t.equal((await me(access)).statusCode, 200, 'the session lives on')
})

t.test('DeleteAccount with two factors on needs a session that passed them, and removes the second factor too', async (t) => {
  const { mfaApp } = await import('../helpers/mfa.js')
  const mfa = await mfaApp(t, { account: { deletion: true } })
  const { accessToken } = await mfa.enable()
  const passwordOnly = (await mfa.app.passwordAuth.sessions.start(mfa.ada.id, { request: { log: mfa.app.log, ip: '127.0.0.1', headers: {} } as never, reply: { header: () => {} } as never }))!.accessToken
  expectProblem(t, await mfa.post('/DeleteAccount', passwordOnly, { password: PASSWORD }), 401, 'FST_PWAUTH_MFA_REQUIRED')
  expectProblem(t, await mfa.post('/DeleteAccount', accessToken, {}), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'a session that passed them still needs the password')
  t.equal((await mfa.post('/DeleteAccount', accessToken, { password: PASSWORD })).statusCode, 204)
  t.equal(await mfa.accounts.findById(mfa.ada.id), null)
})

/** A one-time token store whose removeAll fails, as a store going down in the middle of a deletion does. */
class FailingRemoval extends MemoryOneTimeTokenStore {
  override async removeAll (): Promise<void> { throw new Error('connection lost') }
}

t.test('DeleteAccount with a store failing after the account is gone: 503, the rest is still removed, and nothing left works', async (t) => {
  const oneTimeTokens = new FailingRemoval()
  const { post, tokens, login, me, refresh, accounts, ada, sessions, message, events, messages } = await accountApp(t, { oneTimeTokens, mfa: { issuer: 'Test' } })
  const first = await tokens()
  const setup = await post('/Mfa/Setup', first.accessToken)
  const confirm = await post('/Mfa/Confirm', first.accessToken, { code: totpCode(setup.json().secret, currentStep()), password: PASSWORD })
  const recoveryCodes: string[] = confirm.json().recoveryCodes
  t.equal((await post('/ForgotPassword', undefined, { email: EMAIL })).statusCode, 202)
  const reset = await message('password_reset', EMAIL)
  const mfaToken = (await login(EMAIL, PASSWORD)).json().mfaToken
  t.type(mfaToken, 'string', 'a pending login challenge')
  const other = (await post('/LoginMfa', undefined, { mfaToken: (await login(EMAIL, PASSWORD)).json().mfaToken, code: recoveryCodes[0] })).json()
  t.type(other.accessToken, 'string', 'a second session, which passed two factors')

  expectProblem(t, await post('/DeleteAccount', other.accessToken, { password: PASSWORD }), 503, 'FST_PWAUTH_UNAVAILABLE')
  t.equal(await accounts.findById(ada.id), null, 'the account went first')
  t.same(await sessions.list(ada.id), [], 'the parts after the failing one ran too')
  const deleted = events.find((e) => e.type === 'account.deleted')
  t.match(deleted, { accountId: ada.id, leftovers: ['oneTimeTokens'] }, 'the host hears what was left')
  t.ok(oneTimeTokens.size > 0, 'the tokens the store could not remove are still in it')
  t.ok(messages.some((m) => m.type === 'account_deleted' && m.to === EMAIL), 'the address hears of it: the account is gone')
  for (const session of [first, other]) {
    t.equal((await me(session.accessToken)).statusCode, 401, 'no access token works')
    t.equal((await refresh(session.refreshToken)).statusCode, 401, 'no refresh token works')
  }
  expectProblem(t, await post('/DeleteAccount', other.accessToken, { password: PASSWORD }), 401, 'FST_PWAUTH_TOKEN_INVALID', 'a retry with the same session finds no account')
  expectProblem(t, await post('/LoginMfa', undefined, { mfaToken, code: recoveryCodes[1] }), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'the challenge left in the store is dead')
  expectProblem(t, await post('/ResetPassword', undefined, { token: reset.token, newPassword: 'a fresh passphrase 42', confirmNewPassword: 'a fresh passphrase 42' }), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID', 'so is the reset link')
  expectProblem(t, await login(EMAIL, PASSWORD), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'the address is unknown')
})

t.test('DeleteAccount with the account store failing: 503, nothing is removed, and the same session may try again', async (t) => {
  const { post, token, accounts, ada, me } = await accountApp(t)
  const access = await token()
  const remove = accounts.delete.bind(accounts)
  accounts.delete = async () => { throw new Error('connection lost') }
  expectProblem(t, await post('/DeleteAccount', access, { password: PASSWORD }), 503, 'FST_PWAUTH_UNAVAILABLE')
  t.not(await accounts.findById(ada.id), null)
  t.equal((await me(access)).statusCode, 200, 'the session lives on')
  accounts.delete = remove
  t.equal((await post('/DeleteAccount', access, { password: PASSWORD })).statusCode, 204)
  t.equal(await accounts.findById(ada.id), null)
})

t.test('DeleteAccount tells every address the account left within revertTtl: a taker who moved it away (A → T1 → T2) cannot delete it unseen', async (t) => {
  const { post, changeToken, token, messages, message } = await accountApp(t)
  const taker = await token()
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(taker, 'taker1@example.net') })).statusCode, 204)
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(taker, 'taker2@example.net') })).statusCode, 204)
  t.equal((await post('/DeleteAccount', taker, { password: PASSWORD })).statusCode, 204)
  await message('account_deleted', EMAIL)
  t.same(messages.filter((m) => m.type === 'account_deleted').map((m) => m.to).sort(), ['ada@example.com', 'taker1@example.net', 'taker2@example.net'],
    'the current address, and both it left')
})

t.test('DeleteAccount with a token store without removeAll still removes the revert links of every address the account left', async (t) => {
  const oneTimeTokens = new MemoryOneTimeTokenStore()
  Object.assign(oneTimeTokens, { removeAll: undefined })
  const { post, changeToken, token, message } = await accountApp(t, { oneTimeTokens })
  const taker = await token()
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(taker, 'taker1@example.net') })).statusCode, 204)
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(taker, 'taker2@example.net') })).statusCode, 204)
  const revert = (await message('email_changed', EMAIL)).token!
  t.ok(oneTimeTokens.size >= 4, 'before: a revert link and a note for each address left')
  t.equal((await post('/DeleteAccount', taker, { password: PASSWORD })).statusCode, 204)
  t.equal(oneTimeTokens.size, 0, 'no revert link or note is left')
  expectProblem(t, await post('/RevertEmailChange', undefined, { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID')
})

t.test('DeleteAccount tells an address the account left by a revert; none it left longer ago than revertTtl', async (t) => {
  const { post, changeToken, token, messages, message, login, accounts } = await accountApp(t, { account: { emailChange: true, deletion: true, revertTtl: 1 } })
  const taker = await token()
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(taker, 'taker@example.net') })).statusCode, 204)
  const revert = (await message('email_changed', EMAIL)).token!
  t.equal((await post('/RevertEmailChange', undefined, { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).statusCode, 204)
  const owner = await token(EMAIL, NEW_PASSWORD)
  t.equal((await post('/DeleteAccount', owner, { password: NEW_PASSWORD })).statusCode, 204)
  await message('account_deleted', EMAIL)
  t.same(messages.filter((m) => m.type === 'account_deleted').map((m) => m.to).sort(), ['ada@example.com', 'taker@example.net'], 'the address a revert left too')

  // A second account, moved more than revertTtl ago: only its current address hears.
  accounts.add({ email: 'bob@example.com', passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const bob = await token('bob@example.com')
  t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(bob, 'bob@example.net') })).statusCode, 204)
  await sleep(1200)
  t.equal((await login('bob@example.net', PASSWORD)).statusCode, 200)
  t.equal((await post('/DeleteAccount', bob, { password: PASSWORD })).statusCode, 204)
  await message('account_deleted', 'bob@example.net')
  t.notOk(messages.some((m) => m.type === 'account_deleted' && m.to === 'bob@example.com'), 'left longer ago than revertTtl')
})

t.test('DeleteAccount leaves no activity behind, not even an event of its own goodbye\'s failed delivery', async (t) => {
  const { post, token, app, ada, events } = await accountApp(t, {
    deliver: (message) => { if (message.type === 'account_deleted') throw new Error('mailer down') }
  })
  const access = await token()
  t.ok((await app.passwordAuth.admin.activity(ada.id)).length > 0, 'activity before')
  t.equal((await post('/DeleteAccount', access, { password: PASSWORD })).statusCode, 204)
  for (let waited = 0; !events.some((e) => e.type === 'message.failed') && waited < 2000; waited += 10) await sleep(10)
  t.ok(events.some((e) => e.type === 'message.failed' && e.accountId === ada.id), 'the host hears of the failed delivery')
  t.same(await app.passwordAuth.admin.activity(ada.id), [], 'but the deleted account keeps no record of it')
})

t.test('Export: what the plugin holds (never the hash) and what the host adds; needs a recent password proof', async (t) => {
  const { app, token, tokens, clock, ada } = await accountApp(t, { account: { export: true, exportData: async (account) => ({ orders: [1, 2], id: account.id }) } })
  await tokens()
  const access = await token()
  const response = await app.inject({ url: '/Auth/Account/Export', headers: { authorization: `Bearer ${access}` } })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['cache-control'], 'no-store')
  const body = response.json()
  t.match(body, { account: { id: ada.id, email: EMAIL, active: true }, mfa: { enabled: false, recoveryCodesLeft: 0 }, passkeys: [], host: { orders: [1, 2], id: ada.id } })
  t.equal(body.sessions.length, 2)
  t.equal(body.sessions.filter((s: { current: boolean }) => s.current).length, 1)
  t.notOk(response.body.includes('argon2'), 'no hash')
  clock.advance(-TEN_MINUTES)
  const old = await token()
  clock.advance(TEN_MINUTES)
  expectProblem(t, await app.inject({ url: '/Auth/Account/Export', headers: { authorization: `Bearer ${old}` } }), 401, 'FST_PWAUTH_REAUTHENTICATION_REQUIRED')
})
