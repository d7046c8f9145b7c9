import t from 'tap'
import { EMAIL, NEW_PASSWORD, PASSWORD } from '../helpers/app.js'
import { passkeyApp } from '../helpers/passkeys.js'
import { expectProblem } from '../helpers/problem.js'

// Contract §13, §15, §19, §22: a one-time token of every purpose checked against its account stands for nothing once
// the account is deactivated or its credentials change (account/service.ts's ofToken and storedOfToken), at its route.

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

t.test('a deactivation ends the login challenge (LoginMfa, LoginMfa/Options), the e-mail change link and the reset link', async (t) => {
  const { post, enable, challenge, token, messages, accounts, ada } = await passkeyApp(t, { account: { emailChange: true } })
  const link = async (type: string, to: string): Promise<string> => {
    for (let i = 0; i < 200 && !messages.some((m) => m.type === type && m.to === to); i++) await sleep(10)
    return messages.filter((m) => m.type === type && m.to === to).at(-1)!.token!
  }
  t.equal((await post('/ChangeEmail', await token(), { newEmail: 'new@example.net', password: PASSWORD })).statusCode, 202)
  const change = await link('email_change', 'new@example.net')
  const { recoveryCodes } = await enable()
  t.equal((await post('/ForgotPassword', undefined, { email: EMAIL })).statusCode, 202)
  const reset = await link('password_reset', EMAIL)
  const mfaToken = await challenge()

  accounts.setActive(ada.id, false)
  const refused = async (when: string) => {
    expectProblem(t, await post('/LoginMfa/Options', undefined, { mfaToken }), 401, 'FST_PWAUTH_MFA_CODE_INVALID', `LoginMfa/Options ${when}`)
    expectProblem(t, await post('/LoginMfa', undefined, { mfaToken, code: recoveryCodes[0] }), 401, 'FST_PWAUTH_MFA_CODE_INVALID', `LoginMfa ${when}`)
    expectProblem(t, await post('/VerifyEmailChange', undefined, { token: change }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', `VerifyEmailChange ${when}`)
    expectProblem(t, await post('/ResetPassword', undefined, { token: reset, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD, code: recoveryCodes[1] }), 400,
      'FST_PWAUTH_RESET_TOKEN_INVALID', `ResetPassword ${when}`)
  }
  await refused('while inactive')
  accounts.setActive(ada.id, true)
  await refused('after the account is active again: the tokens died')
  t.equal((await accounts.findById(ada.id))!.email, EMAIL, 'the address did not move')
  t.equal((await post('/LoginMfa', undefined, { mfaToken: await challenge(), code: recoveryCodes[0] })).statusCode, 200, 'a new Login\'s challenge works')
})

t.test('admin.requirePasswordReset ends a login challenge issued before it (LoginMfa and LoginMfa/Options)', async (t) => {
  const { app, post, enable, challenge, ada } = await passkeyApp(t)
  const { recoveryCodes } = await enable()
  const mfaToken = await challenge()
  t.equal(await app.passwordAuth.admin.requirePasswordReset(ada.id, { admin: 'support' }), true)
  expectProblem(t, await post('/LoginMfa/Options', undefined, { mfaToken }), 401, 'FST_PWAUTH_MFA_CODE_INVALID')
  expectProblem(t, await post('/LoginMfa', undefined, { mfaToken, code: recoveryCodes[0] }), 401, 'FST_PWAUTH_MFA_CODE_INVALID')
})
