import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { outboxMessage } from '../../helpers/outbox.js'
import { repoPath } from '../../helpers/root.js'
import { post, startServer } from '../../helpers/server-process.js'
import { postgresSchema, postgresUnavailable, REDIS_URL, redisUnavailable } from '../../helpers/services.js'

const skip = postgresUnavailable || redisUnavailable

// Contract §5: a rolling deploy of a new signing key. A holds the old key first, B the new one first (the
// keys in opposite order), both over one PostgreSQL and one Redis; C holds the new key alone, after reseal.
t.test('a rotation over two example-server processes holding the keys in opposite order changes nothing but the signing key', { skip }, async (t) => {
  const { url: databaseUrl } = await postgresSchema(t, 'rotation')
  const run = `${process.pid}-${Date.now().toString(36)}`
  const [bob, erin, gina] = ['bob', 'erin', 'gina'].map((name) => `${name}-${run}@example.com`) as [string, string, string]
  const file = join(tmpdir(), `key-rotation-${run}.json`)
  const outbox = join(tmpdir(), `key-rotation-${run}.outbox.jsonl`)
  const password = 'a long passphrase for everyone'
  await writeFile(file, JSON.stringify([bob, erin, gina].map((email) => ({ email, password }))))
  const [oldKey, newKey] = [`old-rotation-secret-${run}-${'o'.repeat(32)}`, `new-rotation-secret-${run}-${'n'.repeat(32)}`]
  const env = { DATABASE_URL: databaseUrl, REDIS_URL, AUTH_ACCOUNTS_FILE: file, AUTH_RATE_LIMIT: 'off', AUTH_MAIL_OUTBOX: outbox }
  const envA = { ...env, JWT_SECRET: oldKey, JWT_PREVIOUS_SECRETS: newKey }
  const envB = { ...env, JWT_SECRET: newKey, JWT_PREVIOUS_SECRETS: oldKey }
  const [a, b] = await Promise.all([startServer(t, envA), startServer(t, envB)])
  const login = async (server: { url: string }, email: string, secret = password) => await post(`${server.url}/Auth/Login`, { email, password: secret })

  await t.test('the counter is not doubled: 5 failures in all across both, then both refuse', async (t) => {
    for (let i = 0; i < 5; i++) t.equal((await login(i % 2 === 0 ? a : b, bob, `wrong guess ${i}`)).status, 401)
    t.equal((await login(a, bob, 'one more guess')).status, 429, 'A refuses the 6th')
    t.equal((await login(b, bob)).status, 429, 'and B, even with the right password')
  })

  await t.test('a reset link asked on A works on B', async (t) => {
    t.equal((await post(`${a.url}/Auth/ForgotPassword`, { email: erin })).status, 202)
    const token = (await outboxMessage(outbox, 'password_reset', erin)).token!
    const reset = await post(`${b.url}/Auth/ResetPassword`, { token, newPassword: 'erin chose this on b', confirmNewPassword: 'erin chose this on b' })
    t.equal(reset.status, 204)
    t.equal((await login(a, erin, 'erin chose this on b')).status, 200)
  })

  await t.test('a two-factor user logs in after the old key is removed, once reseal() ran', async (t) => {
    const { generateSync } = await import('otplib')
    const bearer = { authorization: `Bearer ${(await (await login(a, gina)).json() as { accessToken: string }).accessToken}` }
    const { secret } = await (await post(`${a.url}/Auth/Mfa/Setup`, undefined, bearer)).json() as { secret: string }
    const step = Math.floor(Date.now() / 30_000)
    const code = (at: number) => generateSync({ secret, epoch: at * 30 })
    t.equal((await post(`${a.url}/Auth/Mfa/Confirm`, { code: code(step), password }, bearer)).status, 200, 'sealed under the old key by A')
    // `npm run reseal` with B's environment: the new key first.
    const { stdout } = await promisify(execFile)(process.execPath, [repoPath('dist/example/reseal.js')], { env: { PATH: process.env.PATH, ...envB } })
    t.match(stdout, /re-sealed [1-9]\d* second-factor secret/)
    const c = await startServer(t, { ...env, JWT_SECRET: newKey })
    const { mfaToken } = await (await login(c, gina)).json() as { mfaToken: string }
    t.equal((await post(`${c.url}/Auth/LoginMfa`, { mfaToken, code: code(step + 1) })).status, 200, 'the old key gone, her code still logs her in')
  })
})
