import Fastify, { type FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import t from 'tap'
import { passwordAuthLogger, passwordAuthRedactPaths, passwordAuthRequestSerializer, redactLogLine } from '../../lib/index.js'
import { PLUGIN_TIMEOUT_MS } from '../helpers/app.js'

/** Every secret field of contract §10 (and the headers), each with a value of its own. */
const SECRETS: Record<string, unknown> = Object.fromEntries([
  ['password', 'V-PASSWORD'], ['currentPassword', 'V-CURRENT'], ['newPassword', 'V-NEW'], ['confirmNewPassword', 'V-CONFIRMNEW'],
  ['confirmPassword', 'V-CONFIRM'], ['passwordHash', 'V-HASH'], ['accessToken', 'V-AT'], ['refreshToken', 'V-RT'], ['deviceToken', 'V-DT'],
  ['token', 'V-LINK'], ['mfaToken', 'V-MFA'], ['recoveryCodes', ['V-RECOVERY']], ['secret', 'V-TOTP'], ['otpauthUrl', 'otpauth://V-URL'],
  ['authorization', 'Bearer V-BEARER'], ['cookie', 'V-COOKIE'], ['set-cookie', ['V-SETCOOKIE']]
])

function written (options: Record<string, unknown> = {}): { log: FastifyBaseLogger, lines: string[] } {
  const lines: string[] = []
  return { log: pino(passwordAuthLogger(options), { write: (line: string) => { lines.push(line) } }) as FastifyBaseLogger, lines }
}

t.test('every secret field is redacted at any depth, in arrays and in bindings; what is not secret stays', async (t) => {
  const { log, lines } = written()
  const nested = { a: { b: { c: { d: SECRETS } } } }
  log.info({ ...SECRETS, req: { body: SECRETS }, list: [SECRETS, { deeper: [SECRETS] }], nested }, 'secrets')
  log.child({ session: { refreshToken: 'V-BOUND' } }).info('bound')
  const all = lines.join('')
  t.notMatch(all, /V-|otpauth:/, 'no value of a secret field, at any depth')
  const entry = JSON.parse(lines[0]!)
  t.equal(entry.nested.a.b.c.d.password, '[Redacted]')
  t.equal(entry.list[1].deeper[0].recoveryCodes, '[Redacted]', 'an array field as a whole')
  t.equal(entry.msg, 'secrets', 'the rest of the line as written')
  t.equal(lines.length, 2)
  t.ok(lines.every((line) => line.endsWith('\n')), 'one line each')
})

t.test('code and a passkey response are secret in a body only', async (t) => {
  const { log, lines } = written()
  log.info({ req: { body: { code: 'V-CODE', response: { signature: 'V-SIG' } } }, body: { code: 'V-TOP' }, err: { code: 'FST_PWAUTH_SOMETHING' }, response: 'kept' })
  t.notMatch(lines[0]!, /V-/)
  const entry = JSON.parse(lines[0]!)
  t.equal(entry.err.code, 'FST_PWAUTH_SOMETHING', 'an error\'s code stays readable')
  t.equal(entry.response, 'kept')
})

t.test('a line that names no secret field is written as it is', async (t) => {
  const line = '{"level":30,"reqId":"req-1","res":{"statusCode":200},"msg":"request completed"}\n'
  t.equal(redactLogLine(line), line, 'the same string, not a copy')
  t.equal(redactLogLine('{"a":{"__proto__":{"password":"x"}}}'), '{"a":{"__proto__":{"password":"[Redacted]"}}}', 'a __proto__ key is a key like any other')
  t.equal(redactLogLine('{"password":"x" broken\n'), '{"msg":"fastify-password-auth: a log line naming a secret field was not JSON, so it was dropped"}\n',
    'a line it cannot read is not written')
})

t.test('a host\'s own streamWrite hook and serializers are kept', async (t) => {
  const { log, lines } = written({ hooks: { streamWrite: (line: string) => line.replace('"msg":"hi"', '"msg":"hi","password":"V-ADDED"') }, serializers: { user: () => 'serialized' } })
  log.info({ user: { id: 1 } }, 'hi')
  t.match(lines[0]!, /"password":"\[Redacted\]"/, 'the host\'s hook runs first, then the redaction')
  t.match(lines[0]!, /"user":"serialized"/)
  t.equal(passwordAuthLogger().serializers?.req, passwordAuthRequestSerializer, 'no options: the plugin\'s request serializer and the hook')
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS, logger: passwordAuthLogger({ level: 'info', stream: { write: (line: string) => { lines.push(line) } } }) })
  t.teardown(async () => { await app.close() })
  app.get('/me', async () => ({}))
  await app.inject({ url: '/me?access_token=V-URL-TOKEN' })
  t.match(lines.join(''), /"url":"\/me\?access_token=\[Redacted\]"/, 'the plugin\'s request serializer by default')
  t.notMatch(lines.join(''), /V-URL-TOKEN/)
})

/** Median nanoseconds of one request's logger (the child Fastify makes, and a log call below the level), over alternating batches. */
function childCosts (loggers: Record<string, FastifyBaseLogger>, batches: number, perBatch: number): Record<string, number> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(loggers).map((name) => [name, []]))
  for (let batch = 0; batch < batches; batch++) {
    for (const [name, log] of Object.entries(loggers)) {
      const started = process.hrtime.bigint()
      for (let i = 0; i < perBatch; i++) log.child({ reqId: `req-${i}` }, {}).info('below the level')
      samples[name]!.push(Number(process.hrtime.bigint() - started) / perBatch)
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!]))
}

t.test('a request\'s logger with the recommended configuration costs about what a bare one does', async (t) => {
  const sink = { write: () => {} }
  const apps = {
    bare: Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS, logger: { level: 'warn', stream: sink } }),
    recommended: Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS, logger: passwordAuthLogger({ level: 'warn', stream: sink }) }),
    wildcards: Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS, logger: { level: 'warn', stream: sink, redact: [...passwordAuthRedactPaths] } })
  }
  t.teardown(async () => { await Promise.all(Object.values(apps).map(async (app) => { await app.close() })) })
  const loggers = Object.fromEntries(Object.entries(apps).map(([name, app]) => [name, app.log]))
  childCosts(loggers, 5, 500) // warm-up
  // Medians of alternating batches: a loaded machine slows some batches, rarely the median of one side only.
  const cost = childCosts(loggers, 41, 1000)
  t.comment(`ns per request logger: ${JSON.stringify(cost)}`)
  t.ok(cost.recommended! <= 5 * cost.bare!, `recommended ${cost.recommended!.toFixed(0)} ns ≤ 5 × bare ${cost.bare!.toFixed(0)} ns`)
  // The measure can tell: the deprecated wildcard paths redact every child's bindings.
  t.ok(cost.wildcards! > 5 * cost.bare!, `wildcard paths ${cost.wildcards!.toFixed(0)} ns > 5 × bare`)
})
