import { randomUUID } from 'node:crypto'
import { rm, writeFile } from 'node:fs/promises'
import type { FastifyInstance } from 'fastify'
import { Kysely, MysqlDialect, PostgresDialect } from 'kysely'
import knex, { type Knex } from 'knex'
import { createPool } from 'mysql2'
import t, { type Test } from 'tap'
import { authenticate, hashPassword } from '../../../lib/index.js'
import { docBlock } from '../../helpers/docs.js'
import { mysqlDatabase, mysqlUnavailable } from '../../helpers/mysql.js'
import { ROOT_URL, repoPath } from '../../helpers/root.js'
import { postgresSchema, postgresUnavailable } from '../../helpers/services.js'

// The ORM guide's blocks as written: each migration makes the tables on the ORM's own connection, then each app runs
// the plugin on the pool it shares with the ORM: an account the ORM adds logs in, /me answers, and the ORM reads the
// session row the plugin wrote.
const GUIDE = 'example/docs/orms.md'
const EMAIL = 'ada@example.com'
const PASSWORD = 'correct horse battery staple'

/** A block as a module a package user would write, importing this repository's build; its `exports` appended. */
async function blockModule (t: Test, name: string, exports: string): Promise<Record<string, any>> {
  const code = docBlock(GUIDE, name)
    .replace("'fastify-password-auth/postgres'", `'${new URL('dist/lib/stores/postgres/index.js', ROOT_URL).href}'`)
    .replace("'fastify-password-auth/mysql'", `'${new URL('dist/lib/stores/mysql/index.js', ROOT_URL).href}'`)
    .replace("'fastify-password-auth/schema'", `'${new URL('dist/lib/stores/schema/index.js', ROOT_URL).href}'`)
    .replace("'fastify-password-auth'", `'${new URL('dist/lib/index.js', ROOT_URL).href}'`)
  const file = repoPath('dist', `orms-docs-${name}-${process.pid}.mjs`)
  await writeFile(file, `${code}\n${exports}\n`)
  t.teardown(async () => { await rm(file, { force: true }) })
  return await import(new URL(`file://${file}`).href) as Record<string, any>
}

/** The app of block `name` on DATABASE_URL = `url`: log in with the account `addAccount` put there through the ORM. */
async function logsIn (t: Test, name: string, url: string, addAccount: (db: any, passwordHash: string) => Promise<unknown>,
  sessions: (db: any) => Promise<number>): Promise<void> {
  process.env.DATABASE_URL = url
  process.env.JWT_SECRET = `orms-docs-${'o'.repeat(32)}`
  const { app, db } = await blockModule(t, name, 'export { app, db }') as { app: FastifyInstance, db: unknown }
  let closed = false
  t.teardown(async () => { if (!closed) await app.close() })
  await addAccount(db, await hashPassword(PASSWORD))
  app.get('/me', { onRequest: authenticate }, async (request) => request.account)

  const login = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD } })
  t.equal(login.statusCode, 200, `${name}: Login`)
  const me = await app.inject({ url: '/me', headers: { authorization: `Bearer ${login.json<{ accessToken: string }>().accessToken}` } })
  t.equal(me.json<{ email: string }>().email, EMAIL, `${name}: /me`)
  t.equal(await sessions(db), 1, `${name}: the ORM reads the session the plugin wrote`)
  await app.close()
  closed = true
}

t.test('Kysely on PostgreSQL: the migration makes the tables, the plugin runs on the dialect\'s pg Pool', { skip: postgresUnavailable }, async (t) => {
  const { pool, url } = await postgresSchema(t, 'orms_kysely')
  const { up } = await blockModule(t, 'kysely-migration-postgres', '')
  await up(new Kysely({ dialect: new PostgresDialect({ pool }) })) // the helper ends its pool
  await logsIn(t, 'kysely-postgres', url,
    async (db: Kysely<any>, passwordHash) => await db.insertInto('auth_accounts').values({ email: EMAIL, password_hash: passwordHash }).execute(),
    async (db: Kysely<any>) => (await db.selectFrom('auth_sessions').selectAll().execute()).length)
})

t.test('Knex on PostgreSQL: the migration makes the tables, knex and the plugin share one pg Pool', { skip: postgresUnavailable }, async (t) => {
  const { pool, url } = await postgresSchema(t, 'orms_knex')
  const { up } = await blockModule(t, 'knex-migration-postgres', '')
  const migrations = knex({ client: 'pg', connectionPool: pool })
  await up(migrations)
  await migrations.destroy()
  await logsIn(t, 'knex-postgres', url,
    async (db: Knex, passwordHash) => await db('auth_accounts').insert({ email: EMAIL, password_hash: passwordHash }),
    async (db: Knex) => (await db('auth_sessions').select('*')).length)
})

t.test('Kysely on MySQL: one statement at a time makes the tables, the plugin runs on the callback pool\'s promise face', { skip: mysqlUnavailable }, async (t) => {
  const { url } = await mysqlDatabase(t, 'orms_kysely')
  const { up } = await blockModule(t, 'kysely-migration-mysql', '')
  const migrations = new Kysely<any>({ dialect: new MysqlDialect({ pool: createPool({ uri: url, connectionLimit: 2 }) }) })
  await up(migrations)
  await migrations.destroy()
  await logsIn(t, 'kysely-mysql', url,
    async (db: Kysely<any>, passwordHash) => await db.insertInto('auth_accounts').values({ id: randomUUID(), email: EMAIL, password_hash: passwordHash }).execute(),
    async (db: Kysely<any>) => (await db.selectFrom('auth_sessions').selectAll().execute()).length)
})

t.test('Knex on MySQL: knex and the plugin share one mysql2 promise pool', { skip: mysqlUnavailable }, async (t) => {
  const { pool, url } = await mysqlDatabase(t, 'orms_knex')
  const { up } = await blockModule(t, 'kysely-migration-mysql', '')
  await up(new Kysely<any>({ dialect: new MysqlDialect({ pool: pool.pool }) })) // the helper ends its pool
  await logsIn(t, 'knex-mysql', url,
    async (db: Knex, passwordHash) => await db('auth_accounts').insert({ id: randomUUID(), email: EMAIL, password_hash: passwordHash }),
    async (db: Knex) => (await db('auth_sessions').select('*')).length)
})
