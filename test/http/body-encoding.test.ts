import t from 'tap'
import { buildTestApp, EMAIL, PASSWORD } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'
import { rawRequest } from '../helpers/raw-http.js'

const JSON_TYPE = 'application/json'
/** A ChangePassword body for ada whose new password is `tr<bytes>s and a long tail`, as raw bytes. */
function changeBytes (middle: number[], email = EMAIL): Buffer {
  const password = (bytes: number[]): Buffer => Buffer.concat([Buffer.from('tr'), Buffer.from(bytes), Buffer.from('s and a long tail')])
  return Buffer.concat([
    Buffer.from(`{"email":"${email}","currentPassword":"${PASSWORD}","newPassword":"`), password(middle),
    Buffer.from('","confirmNewPassword":"'), password(middle), Buffer.from('"}')
  ])
}

t.test('bytes that are not UTF-8 never become a password: Latin-1 é, encoded surrogates', async (t) => {
  const { app, login } = await buildTestApp(t)
  const change = async (payload: Buffer, contentType = JSON_TYPE) =>
    await app.inject({ method: 'POST', url: '/Auth/ChangePassword', payload, headers: { 'content-type': contentType } })

  expectProblem(t, await change(changeBytes([0xE9]), 'application/json; charset=latin1'), 415, 'FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE', 'Latin-1 declared')
  expectProblem(t, await change(changeBytes([0xE9])), 400, 'FST_PWAUTH_MALFORMED_BODY', 'Latin-1 é sent as UTF-8')
  expectProblem(t, await change(changeBytes([0xED, 0xA0, 0x80])), 400, 'FST_PWAUTH_MALFORMED_BODY', 'ED A0 80 (an encoded surrogate)')
  expectProblem(t, await change(changeBytes([0xED, 0xBF, 0xBF])), 400, 'FST_PWAUTH_MALFORMED_BODY', 'ED BF BF (an encoded surrogate)')
  expectProblem(t, await change(changeBytes([0xC3])), 400, 'FST_PWAUTH_MALFORMED_BODY', 'a truncated sequence')
  expectProblem(t, await change(changeBytes([0xC0, 0xA9])), 400, 'FST_PWAUTH_MALFORMED_BODY', 'an overlong encoding')
  t.equal((await login()).statusCode, 200, 'the password never changed')
  for (const variant of ['tr\u00E8s and a long tail', 'tr\u00FFs and a long tail', 'tr\uFFFDs and a long tail']) {
    t.equal((await login(EMAIL, variant)).statusCode, 401, JSON.stringify(variant))
  }

  t.equal((await change(changeBytes([0xC3, 0xA9]))).statusCode, 204, 'é in UTF-8 is a fine password')
  t.equal((await login(EMAIL, 'tr\u00E9s and a long tail')).statusCode, 200)
  for (const variant of ['tr\u00E8s and a long tail', 'tr\uFFFDs and a long tail']) {
    t.equal((await login(EMAIL, variant)).statusCode, 401, `${JSON.stringify(variant)} is another password`)
  }
})

t.test('no parameter or charset=utf-8 alone: any other charset or parameter is a 415 (contract §2)', async (t) => {
  const { app } = await buildTestApp(t)
  let n = 0
  // A new e-mail each time, so the per-e-mail throttle never answers instead.
  const post = async (contentType: string, payload: string | Buffer = JSON.stringify({ email: `nobody${++n}@example.com`, password: 'whatever' })) =>
    await app.inject({ method: 'POST', url: '/Auth/Login', payload, headers: { 'content-type': contentType } })
  for (const fine of ['utf-8', 'UTF-8', 'Utf-8', '"utf-8"', '"UTF-8"', ' utf-8', 'utf-8 ']) {
    t.equal((await post(`application/json; charset=${fine}`)).statusCode, 401, `charset=${fine}`)
  }
  t.equal((await post('application/json;charset=utf-8')).statusCode, 401, 'no space')
  t.equal((await post('application/json; CHARSET = UTF-8')).statusCode, 401, 'white space around the =')
  t.equal((await post('APPLICATION/JSON')).statusCode, 401, 'the media type in capitals')
  for (const other of ['latin1', 'ISO-8859-1', '"latin1"', 'us-ascii', 'utf-16', 'utf8', 'windows-1252', '', '""', '"utf-8', 'utf-8; charset=latin1',
    'utf-8; charset=utf-8', '"utf\\-8"']) {
    expectProblem(t, await post(`application/json; charset=${other}`), 415, 'FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE', `charset=${other}`)
  }
  for (const other of ['application/json; foo=bar', 'application/json; foo=bar; charset=utf-8', 'application/json; charset=utf-8; version=2', 'application/json;']) {
    expectProblem(t, await post(other), 415, 'FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE', other)
  }
  expectProblem(t, await post('application/json; charset=latin1', '{'.repeat(17 * 1024)), 413, 'FST_PWAUTH_BODY_TOO_LARGE', 'the size comes first')
  expectProblem(t, await post(JSON_TYPE, Buffer.alloc(17 * 1024, 0xFF)), 413, 'FST_PWAUTH_BODY_TOO_LARGE', 'before decoding too')
})

t.test('a UTF-8 byte order mark is ignored once (RFC 8259 §8.1); other BOMs are not UTF-8', async (t) => {
  const { app } = await buildTestApp(t)
  const body = Buffer.from(JSON.stringify({ email: EMAIL, password: PASSWORD }))
  const post = async (payload: Buffer) => await app.inject({ method: 'POST', url: '/Auth/Login', payload, headers: { 'content-type': JSON_TYPE } })
  t.equal((await post(Buffer.concat([Buffer.from([0xEF, 0xBB, 0xBF]), body]))).statusCode, 200, 'one UTF-8 BOM')
  expectProblem(t, await post(Buffer.concat([Buffer.from([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF]), body])), 400, 'FST_PWAUTH_MALFORMED_BODY', 'two BOMs')
  expectProblem(t, await post(Buffer.concat([Buffer.from([0xFF, 0xFE]), Buffer.from(JSON.stringify({ email: EMAIL, password: PASSWORD }), 'utf16le')])), 400,
    'FST_PWAUTH_MALFORMED_BODY', 'UTF-16 with its BOM')
  const inPassword = await app.inject({
    method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: `\uFEFF${PASSWORD}` }
  })
  t.equal(inPassword.statusCode, 401, 'inside a string U+FEFF is a character like any other')
})

t.test('prototype poisoning is still refused', async (t) => {
  const { app } = await buildTestApp(t)
  for (const payload of ['{"__proto__": {"admin": true}}', '{"constructor": {"prototype": {"admin": true}}}']) {
    expectProblem(t, await app.inject({ method: 'POST', url: '/Auth/Login', payload, headers: { 'content-type': JSON_TYPE } }), 400, 'FST_PWAUTH_MALFORMED_BODY', payload)
  }
})

t.test('the same bytes through a socket to a listening server', async (t) => {
  const { app } = await buildTestApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const login = (password: number[]): Buffer => Buffer.concat([Buffer.from(`{"email":"${EMAIL}","password":"tr`), Buffer.from(password), Buffer.from('s"}')])
  const status = async (type: string, body: Buffer): Promise<string> => (await rawRequest(port, Buffer.concat([
    Buffer.from(`POST /Auth/Login HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`), body
  ]))).statusLine
  t.equal(await status('application/json; charset=latin1', login([0xE9])), 'HTTP/1.1 415 Unsupported Media Type')
  t.equal(await status(JSON_TYPE, login([0xE9])), 'HTTP/1.1 400 Bad Request')
  t.equal(await status(JSON_TYPE, login([0xED, 0xA0, 0x80])), 'HTTP/1.1 400 Bad Request')
  t.equal(await status('application/json; charset="UTF-8"', login([0xC3, 0xA9])), 'HTTP/1.1 401 Unauthorized')
})
