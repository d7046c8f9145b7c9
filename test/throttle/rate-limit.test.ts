import t from 'tap'
import { buildTestApp, changeBody, EMAIL } from '../helpers/app.js'
import { expectProblem } from '../helpers/problem.js'

t.test('Login and ChangePassword share a per-IP limit, answered as problem+json with Retry-After', async (t) => {
  const { app, token } = await buildTestApp(t, { auth: { rateLimit: { max: 3, timeWindow: 60_000 } } })
  const issued = await token() // 1
  const post = async (url: string, payload: object, remoteAddress = '10.0.0.1') =>
    await app.inject({ method: 'POST', url, payload, remoteAddress })
  t.equal((await post('/Auth/Login', { email: EMAIL, password: 'wrong password' }, '127.0.0.1')).statusCode, 401) // 2
  t.equal((await post('/Auth/ChangePassword', changeBody({ currentPassword: 'wrong password' }), '127.0.0.1')).statusCode, 401) // 3
  const limited = await post('/Auth/Login', { email: EMAIL, password: 'wrong password' }, '127.0.0.1')
  expectProblem(t, limited, 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS')
  t.ok(Number(limited.headers['retry-after']) >= 59 && Number(limited.headers['retry-after']) <= 60, `Retry-After ${limited.headers['retry-after']}`)
  t.equal((await post('/Auth/ChangePassword', changeBody(), '127.0.0.1')).statusCode, 429, 'ChangePassword counts against the same limit')

  t.equal((await post('/Auth/Login', { email: 'other@example.com', password: 'x' })).statusCode, 401, 'another address has its own budget')
  const logout = await app.inject({ method: 'POST', url: '/Auth/Logout', headers: { authorization: `Bearer ${issued}` } })
  t.equal(logout.statusCode, 204, 'Logout is not limited')
})

t.test('the limit is checked before any password verification', async (t) => {
  const { app, login } = await buildTestApp(t, { auth: { rateLimit: { max: 1, timeWindow: 60_000 } } })
  await login('nobody@example.com', 'x')
  for (let i = 0; i < 5; i++) t.equal((await login('nobody@example.com', 'x')).statusCode, 429)
  t.equal(app.passwordAuth.stats().verifications, 1)
})

t.test('the default is 100 per minute', async (t) => {
  const { login } = await buildTestApp(t, { auth: { rateLimit: {} } })
  const statuses: number[] = []
  for (let i = 0; i < 101; i++) statuses.push((await login(`user${i}@example.com`, 'x')).statusCode)
  t.equal(statuses.filter((s) => s === 401).length, 100)
  t.equal(statuses[100], 429)
})

t.test('rateLimit: false turns the per-IP limit off', async (t) => {
  const { login } = await buildTestApp(t, { auth: { rateLimit: false } })
  const statuses = new Set<number>()
  for (let i = 0; i < 120; i++) statuses.add((await login(`user${i}@example.com`, 'x')).statusCode)
  t.same([...statuses], [401])
})

t.test('the limit applies only to the plugin routes', async (t) => {
  const { app } = await buildTestApp(t, {
    auth: { rateLimit: { max: 1, timeWindow: 60_000 } },
    routes: (app) => { app.post('/host', async () => ({ ok: true })) }
  })
  for (let i = 0; i < 5; i++) t.equal((await app.inject({ method: 'POST', url: '/host' })).statusCode, 200)
})

t.test('ForgotPassword, ResetPassword, Register and VerifyEmail count against the same per-IP limit as Login', async (t) => {
  const { app } = await buildTestApp(t, { auth: { rateLimit: { max: 4, timeWindow: 60_000 }, passwordReset: true, registration: true, deliver: () => {} } })
  const post = async (url: string, payload: object) => await app.inject({ method: 'POST', url, payload, remoteAddress: '10.0.0.9' })
  const strong = 'a long enough passphrase here'
  t.equal((await post('/Auth/ForgotPassword', { email: EMAIL })).statusCode, 202)
  t.equal((await post('/Auth/ResetPassword', { token: 'x', newPassword: strong, confirmNewPassword: strong })).statusCode, 400)
  t.equal((await post('/Auth/Register', { email: 'new@example.com', password: strong, confirmPassword: strong })).statusCode, 202)
  t.equal((await post('/Auth/VerifyEmail', { token: 'x', password: strong })).statusCode, 400)
  for (const [url, payload] of [['/Auth/ForgotPassword', { email: EMAIL }], ['/Auth/Register', { email: 'new@example.com', password: strong, confirmPassword: strong }],
    ['/Auth/Login', { email: EMAIL, password: 'x' }]] as const) {
    expectProblem(t, await post(url, payload), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', `${url} is limited once the budget is spent`)
  }
})
