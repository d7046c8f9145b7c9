import t from 'tap'
import { BCRYPT_2Y, DJANGO, PASSWORD, SCRYPT } from '../../fixtures/legacy-hashes.js'
import { writeAccountsFile } from '../../helpers/accounts-file.js'
import { post, startServer } from '../../helpers/server-process.js'

t.test('npm start: bcrypt, Django and scrypt hashes from AUTH_ACCOUNTS_FILE log in and become argon2id', async (t) => {
  const seeds = [
    { email: 'devise@example.com', passwordHash: BCRYPT_2Y, from: 'bcrypt' },
    { email: 'django@example.com', passwordHash: DJANGO, from: 'django-pbkdf2-sha256' },
    { email: 'firebase@example.com', passwordHash: SCRYPT, from: 'scrypt' }
  ]
  const file = await writeAccountsFile(t, seeds.map(({ email, passwordHash }) => ({ email, passwordHash })))
  const server = await startServer(t, { AUTH_ACCOUNTS_FILE: file, JWT_SECRET: 'x'.repeat(40), LOG_LEVEL: 'info' })
  const rehashed = (): Array<{ email: string, from: string }> => server.output().split('\n')
    .filter((line) => line.includes('"password.rehashed"'))
    .map((line) => JSON.parse(line).authEvent)

  for (const { email } of seeds) {
    t.equal((await post(`${server.url}/Auth/Login`, { email, password: 'not the password' })).status, 401, `${email}: wrong password`)
    const login = await post(`${server.url}/Auth/Login`, { email, password: PASSWORD })
    t.equal(login.status, 200, email)
    const { accessToken } = await login.json() as { accessToken: string }
    t.equal((await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${accessToken}` } })).status, 200)
  }
  // pino writes asynchronously: the last login's line may still be on its way (2 s at most).
  for (let i = 0; i < 100 && rehashed().length < seeds.length; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(rehashed().map(({ email, from }) => ({ email, from })), seeds.map(({ email, from }) => ({ email, from })),
    'each hash was replaced at its first login')
  for (const { email } of seeds) t.equal((await post(`${server.url}/Auth/Login`, { email, password: PASSWORD })).status, 200)
  t.equal(rehashed().length, seeds.length, 'and the argon2id hashes that replaced them are current')
  for (const { passwordHash } of seeds) t.notOk(server.output().includes(passwordHash), 'no hash in the log')
})
