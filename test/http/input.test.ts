import t from 'tap'
import { buildTestApp, changeBody, EMAIL, PASSWORD } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

const ROUTES = [
  { url: '/Auth/Login', body: { email: EMAIL, password: PASSWORD } },
  { url: '/Auth/ChangePassword', body: changeBody() }
]

for (const route of ROUTES) {
  t.test(`${route.url}: media types`, async (t) => {
    const { app } = await buildTestApp(t)
    const post = async (contentType: string | undefined, payload: string) => await app.inject({
      method: 'POST', url: route.url, payload, headers: contentType === undefined ? {} : { 'content-type': contentType }
    })
    const json = JSON.stringify({ ...route.body, email: 'nobody@example.com' })
    t.equal((await post('application/json; charset=utf-8', json)).statusCode, 401, 'a charset parameter is fine')
    t.equal((await post('Application/JSON; Charset=UTF-8', json)).statusCode, 401, 'media types are case-insensitive')
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx', 'application/vnd.api+json']) {
      expectProblem(t, await post(type, json), 415, 'FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE')
    }
    expectProblem(t, await post(undefined, json), 415, 'FST_PWAUTH_UNSUPPORTED_MEDIA_TYPE')
  })

  t.test(`${route.url}: unreadable bodies`, async (t) => {
    const { app } = await buildTestApp(t)
    const post = async (payload: string) => await app.inject({ method: 'POST', url: route.url, payload, headers: { 'content-type': 'application/json' } })
    expectProblem(t, await post(''), 400, 'FST_PWAUTH_MALFORMED_BODY')
    expectProblem(t, await post('{"email": '), 400, 'FST_PWAUTH_MALFORMED_BODY')
    expectProblem(t, await post('{"__proto__": {"admin": true}}'), 400, 'FST_PWAUTH_MALFORMED_BODY')
    expectProblem(t, await app.inject({ method: 'POST', url: route.url }), 400, 'FST_PWAUTH_MALFORMED_BODY')
    for (const notAnObject of ['[]', '"text"', '42', 'true']) {
      const problem = expectProblem(t, await post(notAnObject), 400, 'FST_PWAUTH_VALIDATION')
      t.same(problem.errors, [{ pointer: '', detail: 'must be a JSON object' }])
    }
  })

  t.test(`${route.url}: bodies over 16 KiB get 413 before parsing`, async (t) => {
    const { app } = await buildTestApp(t)
    const big = JSON.stringify({ ...route.body, padding: 'x'.repeat(16 * 1024) })
    expectProblem(t, await app.inject({ method: 'POST', url: route.url, payload: big, headers: { 'content-type': 'application/json' } }), 413, 'FST_PWAUTH_BODY_TOO_LARGE')
    // Not even valid JSON: the size is checked first.
    expectProblem(t, await app.inject({ method: 'POST', url: route.url, payload: '{'.repeat(17 * 1024), headers: { 'content-type': 'application/json' } }), 413, 'FST_PWAUTH_BODY_TOO_LARGE')
    const justUnder = JSON.stringify({ ...route.body, email: 'nobody@example.com', padding: 'x'.repeat(15 * 1024) })
    t.equal((await app.inject({ method: 'POST', url: route.url, payload: justUnder, headers: { 'content-type': 'application/json' } })).statusCode, 401)
  })

  t.test(`${route.url}: types are never coerced`, async (t) => {
    const { app } = await buildTestApp(t)
    for (const [field, value] of Object.entries(route.body)) {
      for (const wrong of [123, true, null, ['x'], { x: 1 }]) {
        const problem = expectProblem(t, await app.inject({ method: 'POST', url: route.url, payload: { ...route.body, [field]: wrong } }), 400, 'FST_PWAUTH_VALIDATION')
        t.same(problem.errors, [{ pointer: `/${field}`, detail: 'must be a string' }], `${field}: ${JSON.stringify(wrong)}`)
      }
      t.type(value, 'string')
    }
  })

  t.test(`${route.url}: every field is required`, async (t) => {
    const { app } = await buildTestApp(t)
    for (const field of Object.keys(route.body)) {
      const { [field]: _, ...rest } = route.body as Record<string, unknown>
      const problem = expectProblem(t, await app.inject({ method: 'POST', url: route.url, payload: rest }), 400, 'FST_PWAUTH_VALIDATION')
      t.same(problem.errors, [{ pointer: `/${field}`, detail: 'is required' }])
    }
    const problem = expectProblem(t, await app.inject({ method: 'POST', url: route.url, payload: {} }), 400, 'FST_PWAUTH_VALIDATION')
    t.same(problem.errors.map((error: { pointer: string }) => error.pointer).sort(), Object.keys(route.body).map((field) => `/${field}`).sort(),
      'one error per missing field')
  })

  t.test(`${route.url}: unknown fields are ignored`, async (t) => {
    const { app } = await buildTestApp(t)
    const response = await app.inject({ method: 'POST', url: route.url, payload: { ...route.body, remember: true, extra: { nested: 1 } } })
    t.equal(response.statusCode, route.url === '/Auth/Login' ? 200 : 204)
  })

  t.test(`${route.url}: e-mail rules`, async (t) => {
    const { app } = await buildTestApp(t)
    const invalid = ['', 'ab', 'a@', '@b', 'ab.example.com', 'a@@b', 'a@b@c', 'a b@example.com', 'a@exa mple.com',
      'a\u0000b@example.com', 'a\u0085b@example.com', `${'x'.repeat(250)}@abcd`, '   ']
    for (const email of invalid) {
      const problem = expectProblem(t, await app.inject({ method: 'POST', url: route.url, payload: { ...route.body, email } }), 400, 'FST_PWAUTH_VALIDATION')
      t.same(problem.errors, [{ pointer: '/email', detail: 'must be an e-mail address: 3 to 254 characters, one @ with text on both sides, no white space inside' }], JSON.stringify(email))
    }
    for (const email of ['a@b', `  ${'x'.repeat(249)}@abcd  `, 'ünïcode@exämple.com']) {
      t.equal((await app.inject({ method: 'POST', url: route.url, payload: { ...route.body, email } })).statusCode, 401, `${JSON.stringify(email).slice(0, 20)} is a valid shape`)
    }
  })

  t.test(`${route.url}: password fields take 1 to 1024 UTF-16 code units of well-formed text`, async (t) => {
    const { app } = await buildTestApp(t)
    const passwordFields = Object.keys(route.body).filter((field) => field !== 'email')
    for (const field of passwordFields) {
      for (const [value, detail] of [
        ['', 'must be 1 to 1024 characters long'],
        ['x'.repeat(1025), 'must be 1 to 1024 characters long'],
        ['abc\uD800def', 'must be well-formed Unicode text (no lone surrogate)'],
        ['\uDC00', 'must be well-formed Unicode text (no lone surrogate)'],
        ['\uD83D\uDE00\uD83D', 'must be well-formed Unicode text (no lone surrogate)']
      ] as const) {
        const problem = expectProblem(t, await app.inject({ method: 'POST', url: route.url, payload: { ...route.body, [field]: value } }), 400, 'FST_PWAUTH_VALIDATION')
        t.same(problem.errors.find((error: { pointer: string }) => error.pointer === `/${field}`), { pointer: `/${field}`, detail }, `${field}: ${JSON.stringify(value).slice(0, 20)}`)
      }
    }
  })

  t.test(`${route.url}: input errors never reach password verification`, async (t) => {
    const { app } = await buildTestApp(t)
    await app.inject({ method: 'POST', url: route.url, payload: { ...route.body, email: 42 } })
    await app.inject({ method: 'POST', url: route.url, payload: '{', headers: { 'content-type': 'application/json' } })
    t.equal(app.passwordAuth.stats().verifications, 0)
  })
}

t.test('a lone surrogate is refused even where U+FFFD would verify', async (t) => {
  const { app, accounts } = await buildTestApp(t)
  const { hashPassword } = await import('../../lib/index.js')
  accounts.add({ email: 'replacement@example.com', passwordHash: await hashPassword('secret\uFFFDsecret', { memoryCost: 1024, timeCost: 1 }) })
  const login = async (password: string) => await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: 'replacement@example.com', password } })
  t.equal((await login('secret\uFFFDsecret')).statusCode, 200)
  t.equal((await login('secret\uD800secret')).statusCode, 400, 'argon2 would have mapped the lone surrogate to U+FFFD')
})

t.test('the host app keeps its own validation and coercion', async (t) => {
  const { app } = await buildTestApp(t, {
    before: (app) => {
      app.post('/host', { schema: { body: { type: 'object', properties: { n: { type: 'string' } } } } }, async (request) => request.body)
    }
  })
  const response = await app.inject({ method: 'POST', url: '/host', payload: { n: 123 } })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { n: '123' }, 'Fastify\'s default Ajv still coerces for host routes')
  const text = await app.inject({ method: 'POST', url: '/host', payload: 'plain', headers: { 'content-type': 'text/plain' } })
  t.equal(text.statusCode, 400, 'the host still parses text/plain (its schema then rejects the string)')
  t.not(text.headers['content-type'], 'application/problem+json; charset=utf-8')
})
