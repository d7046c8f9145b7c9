import Fastify from 'fastify'
import t from 'tap'
import { passwordAuthRequestSerializer } from '../../lib/index.js'
import { redactUrl } from '../../lib/http/redact.js'
import { PLUGIN_TIMEOUT_MS } from '../helpers/app.js'

t.test('redactUrl hides the values of secret query parameters and keeps the rest', async (t) => {
  t.equal(redactUrl('/me'), '/me')
  t.equal(redactUrl('/me?x=1'), '/me?x=1')
  t.equal(redactUrl('/me?access_token=eyJ.a.b&x=1'), '/me?access_token=[Redacted]&x=1')
  t.equal(redactUrl('/me?x=1&ACCESS_TOKEN=s&refresh_token=r&token=t&code=c&password=p'),
    '/me?x=1&ACCESS_TOKEN=[Redacted]&refresh_token=[Redacted]&token=[Redacted]&code=[Redacted]&password=[Redacted]')
  t.equal(redactUrl('/me?access%5Ftoken=s'), '/me?access%5Ftoken=[Redacted]', 'an encoded name too')
  t.equal(redactUrl('/me?access_token&%E0=1'), '/me?access_token&%E0=1', 'no value, or a name that does not decode: left as sent')
  t.equal(redactUrl(undefined as unknown as string), undefined, 'a host object logged under req, without a URL: left alone')
})

t.test('passwordAuthRequestSerializer logs the request line without the token', async (t) => {
  const lines: string[] = []
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS, logger: { level: 'info', serializers: { req: passwordAuthRequestSerializer }, stream: { write: (line: string) => { lines.push(line) } } } })
  t.teardown(async () => { await app.close() })
  app.get('/me', async () => ({}))
  await app.inject({ url: '/me?access_token=secret-token-value', headers: { host: 'api.example.com' } })
  const incoming = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'incoming request')
  t.match(incoming.req, { method: 'GET', url: '/me?access_token=[Redacted]', host: 'api.example.com' })
  t.notOk(lines.join('').includes('secret-token-value'))
})
