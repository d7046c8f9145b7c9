import t from 'tap'
import { EMAIL } from '../../helpers/app.js'
import { mfaApp } from '../../helpers/mfa.js'
import { deleteKeys, redisClient, redisUnavailable } from '../../helpers/services.js'

t.test('on Redis, Login, ForgotPassword, Register and LoginMfa spend one per-IP budget, and Refresh none', { skip: redisUnavailable }, async (t) => {
  const nameSpace = `test:${process.pid}:${Date.now().toString(36)}:rate:`
  const client = redisClient(t)
  t.teardown(async () => { await deleteKeys(client, nameSpace) })
  const { app } = await mfaApp(t, { rateLimit: { max: 4, timeWindow: 60_000, redis: client, nameSpace }, passwordReset: true, registration: true })
  const post = async (url: string, payload: object, remoteAddress = '10.0.0.5') => await app.inject({ method: 'POST', url: `/Auth${url}`, payload, remoteAddress })
  const strong = 'a long enough passphrase here'
  t.equal((await post('/Login', { email: EMAIL, password: 'wrong' })).statusCode, 401) // 1
  t.equal((await post('/ForgotPassword', { email: EMAIL })).statusCode, 202) // 2
  t.equal((await post('/Register', { email: 'new@example.com', password: strong, confirmPassword: strong })).statusCode, 202) // 3
  t.equal((await post('/Refresh', { refreshToken: 'x' })).statusCode, 401, 'Refresh is not counted')
  t.equal((await post('/LoginMfa', { mfaToken: 'x', code: '123456' })).statusCode, 401) // 4
  for (const [url, payload] of [['/Login', { email: EMAIL, password: 'wrong' }], ['/ForgotPassword', { email: EMAIL }],
    ['/Register', { email: 'new@example.com', password: strong, confirmPassword: strong }], ['/LoginMfa', { mfaToken: 'x', code: '123456' }]] as const) {
    t.equal((await post(url, payload)).statusCode, 429, `${url} finds the budget spent`)
  }
  const keys = await client.keys(`${nameSpace}*`)
  t.equal(keys.length, 1, `one counter for the client: ${keys.join(', ')}`)
})
