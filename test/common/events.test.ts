import t from 'tap'
import type { AuthEvent } from '../../lib/index.js'
import { buildTestApp, changeBody, EMAIL, NEW_PASSWORD, PASSWORD } from '../helpers/app.js'

t.test('each outcome is reported once, typed, with ids and without secrets', async (t) => {
  const events: AuthEvent[] = []
  const lines: string[] = []
  const test = await buildTestApp(t, {
    auth: { onEvent: (event) => { events.push(event) } },
    fastify: { logger: { level: 'trace', stream: { write: (line: string) => { lines.push(line) } } } }
  })
  test.accounts.add({ email: 'gone@example.com', passwordHash: test.ada.passwordHash, active: false })

  const issued = await test.token()
  await test.login('nobody@example.com', PASSWORD)
  await test.login(EMAIL, 'wrong password one')
  await test.login('gone@example.com', PASSWORD)
  await test.changePassword(changeBody({ currentPassword: 'wrong password two' }))
  await test.changePassword(changeBody())
  const fresh = await test.token(EMAIL, NEW_PASSWORD)
  await test.logout(fresh)
  for (let i = 0; i < 6; i++) await test.login(EMAIL, 'wrong password three')

  const summary = events.map(({ type, ...rest }) => [type, 'reason' in rest ? rest.reason : undefined])
  t.same(summary, [
    ['session.started', undefined],
    ['login.succeeded', undefined],
    ['login.failed', 'unknown_account'],
    ['login.failed', 'wrong_password'],
    ['login.failed', 'inactive_account'],
    ['password.change_failed', 'wrong_password'],
    ['password.changed', undefined],
    ['session.ended', 'password_changed'],
    ['session.started', undefined],
    ['login.succeeded', undefined],
    ['logout', undefined],
    ...Array.from({ length: 4 }, () => ['login.failed', 'wrong_password']),
    // The fifth failure starts the block: reported as the attempt settles, before the route reports the failure.
    ['login.blocked', undefined],
    ['login.failed', 'wrong_password'],
    ['login.throttled', undefined]
  ])
  const first = events.find((e) => e.type === 'login.succeeded')
  t.match(first, { type: 'login.succeeded', accountId: test.ada.id, email: EMAIL, sessionId: String, ip: '127.0.0.1', requestId: String })
  t.ok(Math.abs(first!.time - Date.now()) < 60_000)
  t.match(events.find((e) => e.type === 'login.throttled'), { email: EMAIL, retryAfter: 30, device: false })
  t.match(events.find((e) => e.type === 'login.blocked'), { email: EMAIL, accountId: test.ada.id, device: false, seconds: 30 })
  t.match(events.find((e) => e.type === 'logout'), { accountId: test.ada.id, sessionId: String, tokenId: String })
  t.notOk(events.find((e) => e.type === 'login.failed' && e.reason === 'unknown_account' && 'accountId' in e && e.accountId !== undefined))

  const logged = lines.map((line) => JSON.parse(line)).filter((entry) => entry.authEvent !== undefined)
  t.same(logged.map((entry) => entry.authEvent.type), events.map((e) => e.type), 'every event is logged too')
  t.equal(logged.find((entry) => entry.authEvent.type === 'login.throttled').level, 40, 'throttling logs a warning')

  const secrets = [PASSWORD, NEW_PASSWORD, 'wrong password one', 'wrong password two', 'wrong password three',
    test.ada.passwordHash, issued, fresh, '$argon2id$']
  const everything = JSON.stringify(events) + lines.join('\n')
  for (const secret of secrets) t.notOk(everything.includes(secret), `no ${secret.slice(0, 12)}… in logs or events`)
  for (const token of [issued, fresh]) {
    for (const part of token.split('.')) t.notOk(everything.includes(part), 'no part of a token either')
  }
})

t.test('a throwing or rejecting handler is logged and changes nothing', async (t) => {
  const lines: string[] = []
  let calls = 0
  const test = await buildTestApp(t, {
    auth: { onEvent: (event) => { calls++; if (event.type === 'login.succeeded') throw new Error('audit sink down'); return Promise.reject(new Error('async sink down')) } },
    fastify: { logger: { level: 'error', stream: { write: (line: string) => { lines.push(line) } } } }
  })
  t.equal((await test.login()).statusCode, 200)
  t.equal((await test.login(EMAIL, 'wrong!')).statusCode, 401)
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(calls, 3, 'session.started, login.succeeded, login.failed')
  const errors = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'fastify-password-auth: the onEvent handler failed')
  t.equal(errors.length, 3)
})

t.test('passwordAuthLogger hides secrets from a logger that logs headers and bodies, the routes\' answers too', async (t) => {
  const { passwordAuthLogger } = await import('../../lib/index.js')
  const lines: string[] = []
  const test = await buildTestApp(t, {
    fastify: {
      logger: passwordAuthLogger({
        level: 'info',
        stream: { write: (line: string) => { lines.push(line) } },
        // A host serializer that logs everything it can.
        serializers: { req: (request: { headers: unknown, body?: unknown }) => ({ headers: request.headers, body: request.body }) }
      })
    },
    before: (app) => {
      app.addHook('preHandler', async (request) => { request.log.info({ req: request }, 'body logged') })
      app.addHook('onSend', async (request, reply, payload) => { request.log.info({ answer: { headers: reply.getHeaders(), body: JSON.parse(String(payload || '{}')) } }, 'answer logged') })
    }
  })
  const login = await test.login()
  const { accessToken: token, refreshToken } = login.json()
  await test.changePassword(changeBody())
  await test.logout(token)
  const everything = lines.join('\n')
  t.match(everything, /"authorization":"\[Redacted\]"/, 'the header was logged, redacted')
  t.match(everything, /"body":\{"email":"ada@example.com","password":"\[Redacted\]"\}/, 'the body was logged, redacted')
  t.match(everything, /"body":\{"accessToken":"\[Redacted\]"/, 'the answer was logged, redacted')
  for (const secret of [PASSWORD, NEW_PASSWORD, token, ...token.split('.'), refreshToken]) t.notOk(everything.includes(secret), `no ${String(secret).slice(0, 10)}…`)
})

t.test('passwordAuthRedactPaths hide secrets from a logger that logs headers and bodies', async (t) => {
  const { passwordAuthRedactPaths } = await import('../../lib/index.js')
  const lines: string[] = []
  const test = await buildTestApp(t, {
    fastify: {
      logger: {
        level: 'info',
        redact: [...passwordAuthRedactPaths],
        stream: { write: (line: string) => { lines.push(line) } },
        // A host serializer that logs everything it can.
        serializers: { req: (request: { headers: unknown, body?: unknown }) => ({ headers: request.headers, body: request.body }) }
      }
    },
    before: (app) => { app.addHook('preHandler', async (request) => { request.log.info({ req: request }, 'body logged') }) }
  })
  const token = await test.token()
  await test.changePassword(changeBody())
  await test.logout(token)
  const everything = lines.join('\n')
  t.match(everything, /"authorization":"\[Redacted\]"/, 'the header was logged, redacted')
  t.match(everything, /"body":\{"email":"ada@example.com","password":"\[Redacted\]"\}/, 'the body was logged, redacted')
  for (const secret of [PASSWORD, NEW_PASSWORD, token, ...token.split('.')]) t.notOk(everything.includes(secret), `no ${secret.slice(0, 10)}…`)
  const direct: string[] = []
  const { default: pino } = await import('pino')
  pino({ redact: [...passwordAuthRedactPaths] }, { write: (line: string) => { direct.push(line) } })
    .info({ password: 'TOP', body: { newPassword: 'ONE' }, req: { body: { currentPassword: 'TWO', refreshToken: 'RT', deviceToken: 'DT' } }, account: { passwordHash: 'HASH' }, res: { accessToken: 'AT' } })
  t.notMatch(direct[0], /TOP|ONE|TWO|HASH|RT|AT|DT/, 'every depth a serializer might use, refresh and device tokens too')
  pino({ redact: [...passwordAuthRedactPaths] }, { write: (line: string) => { direct.push(line) } }).info({
    req: { body: { token: 'LINK', mfaToken: 'CHALLENGE', code: 'CODE', password: 'PW', confirmPassword: 'CPW' } },
    res: { body: { secret: 'TOTPSECRET', otpauthUrl: 'otpauth://URL', recoveryCodes: ['RECOVERY'] } },
    body: { code: 'TOPCODE' },
    err: { code: 'FST_PWAUTH_SOMETHING' }
  })
  t.notMatch(direct[1], /LINK|CHALLENGE|"CODE"|CPW|TOTPSECRET|otpauth:|RECOVERY|TOPCODE/, 'every token, code and secret field the routes take or answer')
  t.match(direct[1], /FST_PWAUTH_SOMETHING/, 'an error\'s code stays readable')
})
