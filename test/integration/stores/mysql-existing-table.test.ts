import t, { type Test } from 'tap'
import { hashPassword } from '../../../lib/index.js'
import { accountsTriggerMysql, MysqlAccountStore } from '../../../lib/stores/mysql/index.js'
import { statementsOf } from '../../../lib/stores/mysql/sql.js'
import { accountStoreContract } from '../../../lib/stores/testing/index.js'
import { buildTestApp, changeBody, CHEAP_ARGON2, PASSWORD } from '../../helpers/app.js'
import { docBlock } from '../../helpers/docs.js'
import { mysqlDatabase, mysqlUnavailable } from '../../helpers/mysql.js'

const skip = mysqlUnavailable
const GUIDE = 'example/docs/mysql.md'
const HASH = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE'

type Pool = Awaited<ReturnType<typeof mysqlDatabase>>['pool']

/** The guide's store options, as written (a `const accounts = new MysqlAccountStore({ pool, … })` block), for `pool`. */
function guideStore (name: string, pool: Pool): MysqlAccountStore {
  const source = docBlock(GUIDE, name).replace(/^const accounts = new MysqlAccountStore\(/, 'return new MysqlAccountStore(')
  // eslint-disable-next-line no-new-func -- the guide's own code, run as written
  return new Function('MysqlAccountStore', 'pool', source)(MysqlAccountStore, pool) as MysqlAccountStore
}

async function run (pool: Pool, script: string): Promise<void> {
  for (const statement of statementsOf(script)) await pool.query(statement)
}

let tables = 0
/** A database holding the guide's table and migration (each contract check gets a table of its own, in a database of its own). */
async function guideTable (t: Test, framework: 'rails' | 'laravel'): Promise<Pool> {
  const { pool } = await mysqlDatabase(t, `${framework}_${++tables}`, { connectionLimit: 4 })
  await run(pool, `${docBlock(GUIDE, `mysql-${framework}-table`)}\n${docBlock(GUIDE, `mysql-${framework}-sql`)}`)
  return pool
}

t.test('the guide\'s trigger is the one accountsTriggerMysql prints for the Rails table', async (t) => {
  t.equal(docBlock(GUIDE, 'mysql-rails-sql').split('\n').slice(1).join('\n'), accountsTriggerMysql({ table: 'users' }).replaceAll('`', ''))
})

t.test('the account-store contract on the guide\'s Rails (Devise) users table', { skip }, async (t) => {
  const checks = accountStoreContract({
    create: async () => {
      const pool = await guideTable(t, 'rails')
      const store = guideStore('mysql-rails-store', pool)
      return { store, add: async (account) => (await store.add(account))!, setActive: async (id, active) => await store.setActive(id, active) }
    }
  })
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('the account-store contract on the guide\'s Laravel users table (unsigned ids, a soft-delete condition, a field of yours)', { skip }, async (t) => {
  const checks = accountStoreContract({
    create: async () => {
      const pool = await guideTable(t, 'laravel')
      const store = guideStore('mysql-laravel-store', pool)
      return {
        store,
        fields: { displayName: 'Ada Lovelace' },
        add: async ({ email, passwordHash, active = true, displayName = 'Someone' }) => {
          await pool.execute('INSERT INTO users (name, email, password, deleted_at) VALUES (?, ?, ?, ?)', [displayName, email, passwordHash, active ? null : new Date()] as any[])
          return (await store.findByEmail(email.trim().toLowerCase()))!
        },
        setActive: async (id, active) => {
          await pool.execute(active ? 'UPDATE users SET deleted_at = NULL WHERE id = ?' : docBlock(GUIDE, 'mysql-laravel-deactivate'), [id])
        }
      }
    }
  })
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('the plugin end to end on a Laravel table with rows from before: mixed-case addresses, big unsigned ids, restore after delete', { skip }, async (t) => {
  const pool = await guideTable(t, 'laravel')
  await pool.execute('INSERT INTO users (id, name, email, password) VALUES (?, ?, ?, ?), (?, ?, ?, ?)', [
    '18446744073709551610', 'Ada Lovelace', 'Ada@Example.com', await hashPassword(PASSWORD, CHEAP_ARGON2),
    '18446744073709551611', 'Ada Twin', 'ada.twin@example.com', HASH
  ])
  const accounts = guideStore('mysql-laravel-store', pool)
  const { token, me, changePassword, login } = await buildTestApp(t, { auth: { accounts } })
  const ada = 'ada@example.com'
  const response = await me(await token(' ADA@example.com', PASSWORD))
  t.equal(response.statusCode, 200)
  t.same(response.json(), { id: '18446744073709551610', email: ada, active: true, credentialVersion: 0, displayName: 'Ada Lovelace' },
    'the id exactly, past 2^53; the address lower-cased')
  t.equal(await accounts.findById('18446744073709551611').then((account) => account?.email), 'ada.twin@example.com', 'the neighbour id is another account')
  t.equal(await accounts.findById('18446744073709551616'), null, 'past the unsigned range: unknown')
  t.equal(await accounts.findById('12abc'), null)

  const old = await token(ada, PASSWORD)
  t.equal((await changePassword(changeBody({ email: ada }))).statusCode, 204)
  t.equal((await me(old)).statusCode, 401, 'a password change ends the old tokens')
  const [[row]] = await pool.query('SELECT password, credential_version, email FROM users WHERE id = 18446744073709551610') as any
  t.match(row, { password: /^\$argon2id\$/, credential_version: 1, email: 'Ada@Example.com' }, 'the address stays as the application stored it')

  const password = changeBody().newPassword as string
  const before = await token(ada, password)
  await pool.execute(docBlock(GUIDE, 'mysql-laravel-deactivate'), ['18446744073709551610'])
  t.equal((await me(before)).statusCode, 401, 'soft-deleted')
  t.equal((await login(ada, password)).statusCode, 401)
  await pool.query('UPDATE users SET deleted_at = NULL')
  t.equal((await me(before)).statusCode, 401, 'restored: the token from before stays dead')
  t.equal((await me(await token(ada, password))).statusCode, 200)
})

t.test('a mapped store refuses what its table cannot do, with clear errors', { skip }, async (t) => {
  const pool = await guideTable(t, 'laravel')
  const users = guideStore('mysql-laravel-store', pool)
  await t.rejects(users.setActive('1', false), { name: 'TypeError', message: /setActive\(\) needs a boolean active column/ })
  await t.rejects(users.add({ email: 'a@example.com', passwordHash: HASH, active: false }), /cannot set "active"/)
  await t.rejects(users.add({ email: 'a@example.com', passwordHash: HASH, id: 'abc' }), /id "abc" is not a valid bigint/)
  t.equal(await users.updatePasswordHash({ id: 'abc', expectedHash: HASH, newHash: HASH, advanceCredentialVersion: true }), false)
  t.throws(() => new MysqlAccountStore({ pool, columns: { pasword: 'x' } as never }), /unknown column "columns.pasword"/)
  t.throws(() => new MysqlAccountStore({ pool, idType: 'int' as never }), /"idType" must be one of uuid, bigint, integer, text/)
  t.throws(() => new MysqlAccountStore({ pool: {} } as never), /"pool" must be a mysql2\/promise Pool/)

  await pool.query('ALTER TABLE users DROP INDEX users_email_unique')
  await pool.execute("INSERT INTO users (name, email, password) VALUES ('A', 'twin@example.com', ?), ('B', 'TWIN@example.com', ?)", [HASH, HASH])
  await t.rejects(users.findByEmail('twin@example.com'), /several accounts have this e-mail address/)
})
