import { rm, writeFile } from 'node:fs/promises'
import t from 'tap'
import { docBlock } from '../../helpers/docs.js'
import { mysqlDatabase, mysqlUnavailable } from '../../helpers/mysql.js'
import { ROOT_URL, repoPath } from '../../helpers/root.js'
import { post, startServer } from '../../helpers/server-process.js'

t.test('the MySQL guide\'s app runs as written: log in, /me, refresh, and the session is a row of its own table', { skip: mysqlUnavailable }, async (t) => {
  // As a package user imports it: the package's entry points, from this repository's build.
  const code = docBlock('example/docs/mysql.md', 'mysql')
    .replace("'fastify-password-auth/mysql'", `'${new URL('dist/lib/stores/mysql/index.js', ROOT_URL).href}'`)
    .replace("'fastify-password-auth'", `'${new URL('dist/lib/index.js', ROOT_URL).href}'`)
  const script = repoPath('dist', `mysql-docs-${process.pid}.mjs`)
  await writeFile(script, code)
  t.teardown(async () => { await rm(script, { force: true }) })
  const { pool, url } = await mysqlDatabase(t, 'docs', { connectionLimit: 2 })

  const server = await startServer(t, { DATABASE_URL: url, JWT_SECRET: `mysql-docs-${'s'.repeat(32)}` }, script)
  const login = await post(`${server.url}/Auth/Login`, { email: 'ada@example.com', password: 'correct horse battery staple' })
  t.equal(login.status, 200)
  const { accessToken, refreshToken } = await login.json() as { accessToken: string, refreshToken: string }
  t.equal((await (await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${accessToken}` } })).json() as { email: string }).email, 'ada@example.com')
  t.equal((await post(`${server.url}/Auth/Refresh`, { refreshToken })).status, 200)
  const [[row]] = await pool.query('SELECT generation FROM auth_sessions') as any
  t.equal(Number(row.generation), 1, 'the rotation is in MySQL')
})
