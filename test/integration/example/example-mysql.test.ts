import t from 'tap'
import { BenchPasskey } from '../../../example/bench/passkey-authenticator.js'
import { writeAccountsFile } from '../../helpers/accounts-file.js'
import { mysqlDatabase, mysqlUnavailable } from '../../helpers/mysql.js'
import { failingStart, post, startServer } from '../../helpers/server-process.js'

const EMAIL = 'ada@example.com'
const PASSWORD = 'correct horse battery staple'

t.test('DATABASE_URL=mysql://…: the account, a refresh token and a passkey work, across a restart, with every row in MySQL', { skip: mysqlUnavailable }, async (t) => {
  const { pool, url } = await mysqlDatabase(t, 'example', { connectionLimit: 2 })
  const env = {
    DATABASE_URL: url,
    JWT_SECRET: `example-mysql-${'s'.repeat(32)}`,
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
  const [[counts]] = await pool.query(`SELECT (SELECT count(*) FROM auth_accounts) AS accounts, (SELECT count(*) FROM auth_sessions) AS sessions,
    (SELECT count(*) FROM auth_passkeys) AS passkeys, (SELECT count(*) FROM auth_attempts) AS attempts`) as any
  t.match(counts, { accounts: 1, sessions: 1, passkeys: 1 }, 'the account, its session and its passkey are rows in MySQL')
  t.ok(counts.attempts >= 1, 'and the attempt counters')
  await first.stop()

  const second = await startServer(t, env)
  t.equal((await fetch(`${second.url}/me`, { headers: bearer })).status, 200, 'the access token still names a live session')
  const refreshed = await post(`${second.url}/Auth/Refresh`, { refreshToken })
  t.equal(refreshed.status, 200, 'the refresh token from before the restart rotates')
  t.equal((await post(`${second.url}/Auth/Refresh`, { refreshToken })).status, 200, 'the one just replaced gets the grace answer')
  t.equal((await post(`${second.url}/Auth/Login`, { email: EMAIL, password: 'wrong password, twice over' })).status, 401)
  t.equal((await post(`${second.url}/Auth/Login`, { email: EMAIL, password: PASSWORD })).status, 200, 'the account signs in')
  const { challenge } = await (await post(`${second.url}/Auth/Passkeys/LoginOptions`)).json() as { challenge: string }
  const signIn = await post(`${second.url}/Auth/LoginPasskey`, passkey.get(challenge))
  t.equal(signIn.status, 200, 'the passkey signs in')
  const me = await fetch(`${second.url}/me`, { headers: { authorization: `Bearer ${(await signIn.json() as { accessToken: string }).accessToken}` } })
  t.match(await me.json(), { email: EMAIL, active: true })
})

t.test('DATABASE_URL=mysql://… with no server there: the start fails, saying which', async (t) => {
  const failed = await failingStart({ DATABASE_URL: 'mysql://root@127.0.0.1:1/none', JWT_SECRET: `example-mysql-${'s'.repeat(32)}` })
  t.not(failed.code, 0)
  t.match(failed.output, /DATABASE_URL: cannot set up the tables in MySQL \(connect ECONNREFUSED 127\.0\.0\.1:1\)/)
  t.match((await failingStart({ DATABASE_URL: 'mariadb://127.0.0.1/app' })).output, /DATABASE_URL must be an address starting with postgres:\/\/ or postgresql:\/\/ or mysql:\/\//)
})
