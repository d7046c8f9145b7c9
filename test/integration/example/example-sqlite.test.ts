import t from 'tap'
import { BenchPasskey } from '../../../example/bench/passkey-authenticator.js'
import { writeAccountsFile } from '../../helpers/accounts-file.js'
import { failingStart, post, startServer } from '../../helpers/server-process.js'
import { sqliteFile, sqliteUnavailable } from '../../helpers/sqlite.js'

const EMAIL = 'ada@example.com'
const PASSWORD = 'correct horse battery staple'

t.test('DATABASE_URL=sqlite:<file>: the account, a refresh token and a passkey still work after a restart', { skip: sqliteUnavailable }, async (t) => {
  const file = sqliteFile(t)
  const env = {
    DATABASE_URL: `sqlite:${file}`,
    JWT_SECRET: `example-sqlite-${'s'.repeat(32)}`,
    AUTH_ACCOUNTS_FILE: await writeAccountsFile(t, [{ email: EMAIL, password: PASSWORD }]),
    AUTH_PASSKEY_ORIGINS: 'http://localhost',
    AUTH_RATE_LIMIT: 'off'
  }
  const passkey = new BenchPasskey()
  const first = await startServer(t, env)
  const login = await post(`${first.url}/Auth/Login`, { email: EMAIL, password: PASSWORD })
  t.equal(login.status, 200)
  const { accessToken, refreshToken } = await login.json() as { accessToken: string, refreshToken: string }
  const bearer = { authorization: `Bearer ${accessToken}` }
  const options = await (await post(`${first.url}/Auth/Passkeys/RegisterOptions`, {}, bearer)).json() as { challenge: string, user: { id: string } }
  t.equal((await post(`${first.url}/Auth/Passkeys`, { ...passkey.create(options), password: PASSWORD }, bearer)).status, 201, 'a passkey enrolled')
  await first.stop()

  const second = await startServer(t, env)
  t.equal((await fetch(`${second.url}/me`, { headers: bearer })).status, 200, 'the access token still names a live session')
  const refreshed = await post(`${second.url}/Auth/Refresh`, { refreshToken })
  t.equal(refreshed.status, 200, 'the refresh token from before the restart rotates')
  t.equal((await post(`${second.url}/Auth/Refresh`, { refreshToken: (await refreshed.json() as { refreshToken: string }).refreshToken })).status, 200)
  t.equal((await post(`${second.url}/Auth/Login`, { email: EMAIL, password: PASSWORD })).status, 200, 'the account signs in')
  const { challenge } = await (await post(`${second.url}/Auth/Passkeys/LoginOptions`)).json() as { challenge: string }
  const signIn = await post(`${second.url}/Auth/LoginPasskey`, passkey.get(challenge))
  t.equal(signIn.status, 200, 'the passkey signs in')
  const me = await fetch(`${second.url}/me`, { headers: { authorization: `Bearer ${(await signIn.json() as { accessToken: string }).accessToken}` } })
  t.match(await me.json(), { email: EMAIL, active: true })
})

t.test('DATABASE_URL=sqlite: refuses REDIS_URL beside it, and a missing file name', { skip: sqliteUnavailable }, async (t) => {
  const withRedis = await failingStart({ DATABASE_URL: 'sqlite:/tmp/never.db', REDIS_URL: 'redis://127.0.0.1:6379' })
  t.not(withRedis.code, 0)
  t.match(withRedis.output, /DATABASE_URL=sqlite:… cannot go with REDIS_URL: SQLite serves one server process/)
  t.match((await failingStart({ DATABASE_URL: 'sqlite:' })).output, /DATABASE_URL must name a file after sqlite:, such as sqlite:.\/data\/auth.db, not "sqlite:"/)
})
