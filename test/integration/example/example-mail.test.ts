import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import t, { type Test } from 'tap'
import { outboxMessage, outboxMessages } from '../../helpers/outbox.js'
import { post, startServer, type ServerProcess } from '../../helpers/server-process.js'

const PASSWORD = 'the old passphrase of ada'
const NEW_PASSWORD = 'a new passphrase from the link'
const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

async function accountsFile (): Promise<string> {
  const file = join(tmpdir(), `example-mail-${process.pid}-${Date.now().toString(36)}.json`)
  await writeFile(file, JSON.stringify([{ email: 'ada@example.com', password: PASSWORD }]))
  return file
}

/** Waits until `read` resolves something. */
async function eventually<T> (read: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await read()
    if (value !== undefined) return value
    await sleep(25)
  }
  throw new Error(`gave up waiting for ${what}`)
}

/** Resets ada's password with `token` and proves it took: the new password logs in, the old one does not. */
async function resetWith (t: Test, server: ServerProcess, token: string): Promise<void> {
  t.equal((await post(`${server.url}/Auth/ResetPassword`, { token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).status, 204)
  t.equal((await post(`${server.url}/Auth/Login`, { email: 'ada@example.com', password: NEW_PASSWORD })).status, 200)
  t.equal((await post(`${server.url}/Auth/Login`, { email: 'ada@example.com', password: PASSWORD })).status, 401)
}

t.test('AUTH_MAIL_OUTBOX: each message is one JSON line with its token in clear, and the link resets the password', async (t) => {
  const outbox = join(tmpdir(), `outbox-${process.pid}-${Date.now().toString(36)}.jsonl`)
  const server = await startServer(t, { AUTH_ACCOUNTS_FILE: await accountsFile(), AUTH_MAIL_OUTBOX: outbox, JWT_SECRET: 'x'.repeat(40), APP_URL: 'https://app.example.com' })
  t.equal((await post(`${server.url}/Auth/ForgotPassword`, { email: 'ada@example.com' })).status, 202)
  t.equal((await post(`${server.url}/Auth/ForgotPassword`, { email: 'nobody@example.com' })).status, 202)
  const lines = [await outboxMessage(outbox, 'password_reset')]
  t.match(lines, [{ type: 'password_reset', to: 'ada@example.com', token: /^[\w-]{22}\.[\w-]{43}$/, expiresAt: Number, accountId: String }])
  t.equal(lines[0]!.link, `https://app.example.com/#token=${lines[0]!.token!}`, 'the link the mailbox would show, built from the configured address')
  await resetWith(t, server, lines[0]!.token!)
  const changed = await outboxMessage(outbox, 'password_changed')
  t.match(changed, { type: 'password_changed', to: 'ada@example.com' })
  t.equal(changed.link, undefined, 'a notice without a link has none')
  await outboxMessage(outbox, 'new_device_login')
  t.same((await outboxMessages(outbox)).map(({ type }) => type).sort(), ['new_device_login', 'password_changed', 'password_reset'],
    'nothing for the unknown address (the new-device notice is the sign-in that proved the new password)')
  t.notOk(server.output().includes(lines[0]!.token!), 'the token is in the outbox, nowhere in the server\'s output')
})

t.test('SMTP_URL: the message goes through a real SMTP server, its link built from APP_URL', async (t) => {
  const received: Array<{ from: string, to: string, subject: string, text: string }> = []
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData (stream, session, callback) {
      simpleParser(stream).then((mail) => {
        received.push({ from: mail.from?.text ?? '', to: session.envelope.rcptTo.map((rcpt) => rcpt.address).join(','), subject: mail.subject ?? '', text: mail.text ?? '' })
        callback()
      }, callback)
    }
  })
  // A client gone mid-message (the server process stopped at the test's end) is no failure of what is tested here;
  // without a listener smtp-server's 'error' would be thrown. Any other error fails the test.
  const smtpErrors: Error[] = []
  smtp.on('error', (err: Error & { code?: string }) => { if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') smtpErrors.push(err) })
  await new Promise<void>((resolve) => { smtp.listen(0, '127.0.0.1', () => { resolve() }) })
  t.teardown(async () => { await new Promise<void>((resolve) => { smtp.close(() => { resolve() }) }) })
  const port = (smtp.server.address() as { port: number }).port
  const server = await startServer(t, {
    AUTH_ACCOUNTS_FILE: await accountsFile(),
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    APP_URL: 'https://app.example.com/',
    MAIL_FROM: 'Example <no-reply@example.com>',
    JWT_SECRET: 'y'.repeat(40)
  })
  // A poisoned Host header changes nothing: links come from APP_URL.
  t.equal((await post(`${server.url}/Auth/ForgotPassword`, { email: 'ada@example.com' }, { 'x-forwarded-host': 'evil.example' })).status, 202)
  const mail = await eventually(async () => received[0], 'the SMTP message')
  t.match(mail, { from: /no-reply@example\.com/, to: 'ada@example.com', subject: 'Reset your password' })
  const link = /https:\/\/app\.example\.com\/#token=([\w-]{22}\.[\w-]{43})/.exec(mail.text)
  t.ok(link, `the link in: ${mail.text}`)
  t.notMatch(mail.text, /evil/)
  await resetWith(t, server, link![1]!)
  // The notice of the change, and the new device's (the sign-in with the new password): both awaited, whatever their
  // order, so that no message is still on its way when the server stops.
  await eventually(async () => received[2], 'password_changed and new_device_login')
  t.same(received.slice(1).map(({ subject }) => subject).sort(), ['A sign-in from a new device', 'Your password was changed'])
  t.same(smtpErrors, [], 'the SMTP server saw no error')
})

t.test('without either, a development mailer prints the message', async (t) => {
  const server = await startServer(t, { AUTH_ACCOUNTS_FILE: await accountsFile(), JWT_SECRET: 'z'.repeat(40) })
  t.equal((await post(`${server.url}/Auth/ForgotPassword`, { email: 'ada@example.com' })).status, 202)
  const printed = await eventually(async () => /development mailer[\s\S]*#token=([\w-]{22}\.[\w-]{43})/.exec(server.output()) ?? undefined, 'the printed message')
  await resetWith(t, server, printed[1]!)
})

t.test('without APP_URL, links point to http://localhost:<the port it listens on>, even a port it picked (PORT=0)', async (t) => {
  const outbox = join(tmpdir(), `outbox-port-${process.pid}-${Date.now().toString(36)}.jsonl`)
  const server = await startServer(t, { AUTH_ACCOUNTS_FILE: await accountsFile(), AUTH_MAIL_OUTBOX: outbox, JWT_SECRET: 'x'.repeat(40), PORT: '0' })
  t.not(new URL(server.url).port, '0')
  t.equal(new URL(server.url).hostname, 'localhost', 'links open the page where passkeys work: localhost, not 127.0.0.1')
  t.equal((await post(`${server.url}/Auth/ForgotPassword`, { email: 'ada@example.com' })).status, 202)
  const reset = await outboxMessage(outbox, 'password_reset')
  t.equal(reset.link, `${server.url}/#token=${reset.token!}`)
})
