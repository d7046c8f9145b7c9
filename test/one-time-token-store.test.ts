import t from 'tap'
import { MemoryOneTimeTokenStore } from '../lib/index.js'
import type { PasswordAuthMessage } from '../lib/messages/outbox.js'
import { EMAIL, NEW_PASSWORD } from './helpers/app.js'
import { passkeyApp } from './helpers/passkeys.js'
import { expectProblem } from './helpers/problem.js'

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

async function nextMessage (messages: PasswordAuthMessage[], type: string): Promise<PasswordAuthMessage> {
  for (let i = 0; i < 200; i++) {
    const found = messages.find((message) => message.type === type)
    if (found !== undefined) return found
    await sleep(5)
  }
  throw new Error(`no ${type} message`)
}

t.test('LoginOptions past the store\'s bound (anyone can ask for them) push out no reset link and no mfaToken', async (t) => {
  const { post, enable, challenge, loginMfa, messages } = await passkeyApp(t, { oneTimeTokens: new MemoryOneTimeTokenStore({ maxTokens: 100 }) })
  const { recoveryCodes } = await enable()
  const mfaToken = await challenge()
  t.equal((await post('/ForgotPassword', undefined, { email: EMAIL })).statusCode, 202)
  const link = await nextMessage(messages, 'password_reset')
  for (let i = 0; i < 150; i++) t.equal((await post('/Passkeys/LoginOptions', undefined)).statusCode, 200, `LoginOptions ${i}`, { diagnostic: false })

  t.equal((await loginMfa(mfaToken, recoveryCodes[0])).statusCode, 200, 'the mfaToken still works')
  const reset = await post('/ResetPassword', undefined, { token: link.token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD, code: recoveryCodes[1] })
  t.equal(reset.statusCode, 204, 'the reset link still works')
})

t.test('a memory store whose room for accounts\' tokens is full answers 503, and drops no live token', async (t) => {
  const { enable, challenge, login, loginMfa } = await passkeyApp(t, { oneTimeTokens: new MemoryOneTimeTokenStore({ maxTokens: 1 }) })
  const { recoveryCodes } = await enable()
  const mfaToken = await challenge()
  expectProblem(t, await login(), 503, 'FST_PWAUTH_UNAVAILABLE')
  t.equal((await loginMfa(mfaToken, recoveryCodes[0])).statusCode, 200, 'the first challenge was kept')
  t.ok(await challenge(), 'a used one makes room')
})
