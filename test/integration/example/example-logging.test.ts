import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { outboxMessage } from '../../helpers/outbox.js'
import { post, startServer } from '../../helpers/server-process.js'

interface LogLine { msg?: string, authEvent?: { type: string } }

const lines = (output: string): LogLine[] => output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogLine)

for (const requestLogging of ['off', 'on'] as const) {
  t.test(`npm start with REQUEST_LOGGING=${requestLogging} (LOG_LEVEL=info): audit events always, request lines only when on`, async (t) => {
    const outbox = join(tmpdir(), `logging-${process.pid}-${requestLogging}-${Date.now().toString(36)}.jsonl`)
    const env: Record<string, string> = { LOG_LEVEL: 'info', JWT_SECRET: 'l'.repeat(40), AUTH_MAIL_OUTBOX: outbox }
    if (requestLogging === 'on') env.REQUEST_LOGGING = 'on'
    const server = await startServer(t, env)
    // At info level the helper returns at Fastify's own "listening" line, before the demo account is printed.
    for (let i = 0; i < 100 && !server.output().includes('Demo account'); i++) await new Promise((resolve) => setTimeout(resolve, 20))
    const [, email, password] = /Demo account: (\S+) \/ (\S+)/.exec(server.output())!
    const login = await post(`${server.url}/Auth/Login`, { email, password })
    const { accessToken } = await login.json() as { accessToken: string }
    t.equal((await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${accessToken}` } })).status, 200)
    t.equal((await fetch(`${server.url}/me?access_token=${accessToken}&x=1`)).status, 401, 'a token in the URL is refused')
    // A password reset: its token reaches the outbox (the mailbox) and nothing else.
    t.equal((await post(`${server.url}/Auth/ForgotPassword`, { email })).status, 202)
    const resetToken = (await outboxMessage(outbox, 'password_reset')).token!
    const reset = await post(`${server.url}/Auth/ResetPassword`, { token: resetToken, newPassword: 'a fresh passphrase after reset', confirmNewPassword: 'a fresh passphrase after reset' })
    t.equal(reset.status, 204)
    // A registration: its verification token likewise.
    t.equal((await post(`${server.url}/Auth/Register`, { email: 'logged@example.com', password: 'a passphrase for sign-up', confirmPassword: 'a passphrase for sign-up' })).status, 202)
    const verifyToken = (await outboxMessage(outbox, 'verify_email')).token!
    t.equal((await post(`${server.url}/Auth/VerifyEmail`, { token: verifyToken, password: 'a passphrase for sign-up' })).status, 204)
    await new Promise((resolve) => setTimeout(resolve, 200)) // pino writes asynchronously
    t.notOk(server.output().includes(resetToken.split('.')[1]!), 'no reset token in any log line')
    t.notOk(server.output().includes(verifyToken.split('.')[1]!), 'no verification token either')
    t.notOk(server.output().includes('a passphrase for sign-up'), 'nor the password')
    const logged = lines(server.output())
    t.ok(logged.some((line) => line.authEvent?.type === 'login.succeeded'), 'the audit event is logged')
    const requestLines = logged.filter((line) => line.msg === 'incoming request' || line.msg === 'request completed')
    if (requestLogging === 'on') t.ok(requestLines.length >= 4, 'two lines per request')
    else t.equal(requestLines.length, 0, 'no per-request lines')
    t.notMatch(server.output(), /\(node:\d+\) \[/, 'no process warning (a Fastify deprecation, say)')
    t.notOk(server.output().includes(accessToken), 'and never logged, not even the one in the URL')
    if (requestLogging === 'on') t.ok(server.output().includes('/me?access_token=[Redacted]&x=1'), 'the request line says a token was redacted')
  })
}

t.test('REQUEST_LOGGING takes on or off only', async (t) => {
  const { failingStart } = await import('../../helpers/server-process.js')
  const { code, output } = await failingStart({ REQUEST_LOGGING: 'yes' })
  t.equal(code, 1)
  t.match(output, /REQUEST_LOGGING must be "on" or "off"/)
})
