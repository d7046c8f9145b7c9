import { rm, writeFile } from 'node:fs/promises'
import t from 'tap'
import { docBlock } from '../../helpers/docs.js'
import { ROOT_URL, repoPath } from '../../helpers/root.js'
import { post, startServer } from '../../helpers/server-process.js'
import { sqliteFile, sqliteUnavailable } from '../../helpers/sqlite.js'

t.test('the SQLite guide\'s app runs as written: log in, /me, and the account and its session are in the file after a restart', { skip: sqliteUnavailable }, async (t) => {
  // As a package user imports it: the package's entry points, from this repository's build.
  const code = docBlock('example/docs/sqlite.md', 'sqlite')
    .replace("'fastify-password-auth/sqlite'", `'${new URL('dist/lib/stores/sqlite/index.js', ROOT_URL).href}'`)
    .replace("'fastify-password-auth'", `'${new URL('dist/lib/index.js', ROOT_URL).href}'`)
  const script = repoPath('dist', `sqlite-docs-${process.pid}.mjs`)
  await writeFile(script, code)
  t.teardown(async () => { await rm(script, { force: true }) })
  const env = { SQLITE_FILE: sqliteFile(t), JWT_SECRET: `sqlite-docs-${'s'.repeat(32)}` }

  const first = await startServer(t, env, script)
  const login = await post(`${first.url}/Auth/Login`, { email: 'ada@example.com', password: 'correct horse battery staple' })
  t.equal(login.status, 200)
  const { accessToken, refreshToken } = await login.json() as { accessToken: string, refreshToken: string }
  t.equal((await (await fetch(`${first.url}/me`, { headers: { authorization: `Bearer ${accessToken}` } })).json() as { email: string }).email, 'ada@example.com')
  await first.stop()
  const second = await startServer(t, env, script)
  t.equal((await post(`${second.url}/Auth/Refresh`, { refreshToken })).status, 200, 'the session is in the file')
})
