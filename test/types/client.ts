// Compiled by test/integration/package/types.test.ts on its own (tsconfig.client.json): a browser app, DOM and no Node
// types, using fastify-password-auth/client as a consumer sees it.
import { AuthError, createAuthClient, type LoginResult, type ProblemCode, type SessionView } from 'fastify-password-auth/client'

const auth = createAuthClient({ mode: 'cookie', prefix: '/api/Auth' })
const result: LoginResult = await auth.login({ email: 'ada@example.com', password: 'correct horse battery staple' })
if (result.mfaRequired) await auth.loginMfa({ mfaToken: result.mfaToken, code: '123456', rememberDevice: true })
const sessions: SessionView[] = await auth.sessions.list()
console.log(sessions.map(({ id, current, device }) => `${id} ${current} ${device.browser}`))
const response: Response = await auth.fetch('/api/me', { headers: { accept: 'application/json' } })
console.log(response.status)
auth.onSessionEnded((reason) => { console.log(reason === 'logout' || reason === 'refresh_refused') })
try {
  await auth.reauthenticate({ password: 'x' })
} catch (err) {
  if (err instanceof AuthError && err.code === 'FST_PWAUTH_INVALID_CREDENTIALS') console.log(err.status, err.problem?.detail)
}
const code: ProblemCode = 'FST_PWAUTH_TOO_MANY_ATTEMPTS'
console.log(code)
// @ts-expect-error the login body has no such field
await auth.login({ email: 'ada@example.com', password: 'x', username: 'ada' })
// @ts-expect-error a mode the plugin does not have
createAuthClient({ mode: 'session' })
