import { rm, writeFile } from 'node:fs/promises'
import t from 'tap'
import { docBlock, PRODUCTION_GUIDE } from '../../helpers/docs.js'
import { ROOT_URL, repoPath } from '../../helpers/root.js'
import { post, startServer } from '../../helpers/server-process.js'
import { postgresSchema, postgresUnavailable, REDIS_URL, redisUnavailable } from '../../helpers/services.js'

t.test('the production guide\'s app runs as written on PostgreSQL and Redis: log in, /me, log out', { skip: postgresUnavailable || redisUnavailable }, async (t) => {
  const { url } = await postgresSchema(t, 'production_docs')
  // As a package user imports it: the package's entry points, from this repository's build.
  const code = docBlock(PRODUCTION_GUIDE, 'production')
    .replace("'fastify-password-auth/postgres'", `'${new URL('dist/lib/stores/postgres/index.js', ROOT_URL).href}'`)
    .replace("'fastify-password-auth/redis'", `'${new URL('dist/lib/stores/redis/index.js', ROOT_URL).href}'`)
    .replace("'fastify-password-auth'", `'${new URL('dist/lib/index.js', ROOT_URL).href}'`)
  const script = repoPath('dist', `production-docs-${process.pid}.mjs`)
  await writeFile(script, code)
  t.teardown(async () => { await rm(script, { force: true }) })
  // The block uses the stores' default key prefixes, as the example server does; its keys expire on their own.

  const server = await startServer(t, { DATABASE_URL: url, REDIS_URL, JWT_SECRET: `production-docs-${'p'.repeat(32)}`, LOG_LEVEL: 'info' }, script)
  const login = await post(`${server.url}/Auth/Login`, { email: 'ada@example.com', password: 'correct horse battery staple' })
  t.equal(login.status, 200)
  const { accessToken } = await login.json() as { accessToken: string }
  const me = await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${accessToken}` } })
  t.equal((await me.json() as { email: string }).email, 'ada@example.com')
  t.equal((await post(`${server.url}/Auth/Logout`, undefined, { authorization: `Bearer ${accessToken}` })).status, 204)
  t.equal((await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${accessToken}` } })).status, 401)
})
