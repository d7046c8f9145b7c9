import t from 'tap'
import { secretKeyId } from '../../../lib/tokens/keys.js'
import { hashPassword } from '../../../lib/index.js'
import { PostgresAccountStore, type PostgresAccountStoreOptions } from '../../../lib/stores/postgres/index.js'
import { accountStoreContract } from '../../../lib/stores/testing/index.js'
import { ADA_FIELDS } from '../../helpers/account-fields.js'
import { buildTestApp, CHEAP_ARGON2, changeBody, PASSWORD, SECRET } from '../../helpers/app.js'
import { docBlock, MOVING_IN_GUIDE } from '../../helpers/docs.js'
import { forgeJwt, validClaims } from '../../helpers/jwt.js'
import { namespacePool, postgresSchema, postgresUnavailable } from '../../helpers/services.js'

const skip = postgresUnavailable
const HASH = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE'

/** The README's example table, mapped as the README maps it. */
const USERS: Omit<PostgresAccountStoreOptions, 'pool'> = {
  table: 'users',
  idType: 'bigint',
  columns: { email: 'email_address', passwordHash: 'pw' },
  activeCondition: 'deleted_at IS NULL AND NOT banned',
  fields: { displayName: 'display_name', plan: 'plan' }
}

/** The README's table, created as the application had it, then prepared with the README's migration. */
const USERS_SQL = `${docBlock(MOVING_IN_GUIDE, 'moving-in-table')}\n${docBlock(MOVING_IN_GUIDE, 'moving-in-sql')}`
/** The README's statement that deactivates an account (deleted_at) and ends its sessions. */
const DEACTIVATE = docBlock(MOVING_IN_GUIDE, 'moving-in-deactivate').split('\n')[0]!

t.test('the account-store contract on the README\'s users table (bigint ids, an active condition, your own fields)', { skip }, async (t) => {
  const checks = accountStoreContract({
    create: async () => {
      const pool = await namespacePool(t, 'existing', USERS_SQL)
      const store = new PostgresAccountStore({ pool, ...USERS })
      return {
        store,
        fields: ADA_FIELDS,
        add: async ({ email, passwordHash, active = true, displayName = 'Someone', plan = 'free' }) => {
          await pool.query('INSERT INTO users (email_address, pw, deleted_at, display_name, plan) VALUES ($1, $2, $3, $4, $5)',
            [email, passwordHash, active ? null : new Date(), displayName, plan])
          return (await store.findByEmail(email))!
        },
        setActive: async (id, active) => {
          await pool.query(active ? 'UPDATE users SET deleted_at = NULL WHERE id = $1' : DEACTIVATE, [id])
        }
      }
    }
  })
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('the contract on a uuid-id table with a boolean column and names of its own', { skip }, async (t) => {
  const checks = accountStoreContract({
    create: async () => {
      const pool = await namespacePool(t, 'existing', `CREATE TABLE people (
        person_id uuid PRIMARY KEY DEFAULT gen_random_uuid(), "E-Mail" text NOT NULL, secret text NOT NULL,
        is_enabled boolean NOT NULL DEFAULT true, "Version" integer NOT NULL DEFAULT 0, nickname text);
        CREATE UNIQUE INDEX people_email_key ON people (lower("E-Mail"))`)
      const store = new PostgresAccountStore({
        pool,
        table: 'people',
        columns: { id: 'person_id', email: 'E-Mail', passwordHash: 'secret', active: 'is_enabled', credentialVersion: 'Version' }
      })
      return { store, add: async (account) => (await store.add(account))!, setActive: async (id, active) => await store.setActive(id, active) }
    }
  })
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('the contract on a text-id table', { skip }, async (t) => {
  const checks = accountStoreContract({
    create: async () => {
      const pool = await namespacePool(t, 'existing', `CREATE TABLE members (
        id text PRIMARY KEY DEFAULT 'm_' || md5(random()::text), email text NOT NULL, password_hash text NOT NULL,
        active boolean NOT NULL DEFAULT true, credential_version integer NOT NULL DEFAULT 0, display_name text, plan text);
        CREATE UNIQUE INDEX members_email_key ON members (lower(email))`)
      const store = new PostgresAccountStore({ pool, table: 'members', idType: 'text', fields: { displayName: 'display_name', plan: 'plan' } })
      return {
        store,
        fields: ADA_FIELDS,
        add: async ({ email, passwordHash, active = true, displayName = null, plan = null }) => {
          await pool.query('INSERT INTO members (email, password_hash, active, display_name, plan) VALUES ($1, $2, $3, $4, $5)',
            [email, passwordHash, active, displayName, plan])
          return (await store.findByEmail(email))!
        },
        setActive: async (id, active) => await store.setActive(id, active)
      }
    }
  })
  for (const check of checks) await t.test(check.name, check.run)
})

t.test('the plugin end to end on the README\'s users table', { skip }, async (t) => {
  const { pool } = await postgresSchema(t, 'existing_e2e')
  await pool.query(docBlock(MOVING_IN_GUIDE, 'moving-in-table'))
  // Rows the application had before the plugin moved in.
  await pool.query('INSERT INTO users (email_address, pw, display_name, plan) VALUES ($1, $2, $3, $4), ($5, $6, $7, DEFAULT)', [
    'Ada@Example.com', await hashPassword(PASSWORD, CHEAP_ARGON2), 'Ada Lovelace', 'pro',
    'bob@example.com', await hashPassword('bob has a long passphrase', CHEAP_ARGON2), 'Bob'
  ])
  await pool.query(docBlock(MOVING_IN_GUIDE, 'moving-in-sql'))
  const accounts = new PostgresAccountStore({ pool, ...USERS })
  const { token, me, login, changePassword } = await buildTestApp(t, { auth: { accounts } })
  const ada = 'ada@example.com'

  await t.test('login and /me carry the account with your own fields, without the hash', async (t) => {
    const response = await me(await token('  ADA@example.COM ', PASSWORD))
    t.equal(response.statusCode, 200)
    t.same(response.json(), { id: '1', email: ada, active: true, credentialVersion: 0, displayName: 'Ada Lovelace', plan: 'pro' })
    t.notMatch(response.body, /argon2/)
  })

  await t.test('a password change writes the hash column and ends the old tokens', async (t) => {
    const old = await token(ada, PASSWORD)
    t.equal((await changePassword(changeBody({ email: ada }))).statusCode, 204)
    t.equal((await me(old)).statusCode, 401)
    const { rows } = await pool.query('SELECT pw, credential_version FROM users WHERE id = 1')
    t.match(rows[0], { pw: /^\$argon2id\$/, credential_version: 1 })
    t.equal((await login(ada, changeBody().newPassword as string)).statusCode, 200)
  })

  await t.test('deactivation through the condition and the credential version ends sessions for good', async (t) => {
    const password = changeBody().newPassword as string
    const old = await token(ada, password)
    await pool.query(DEACTIVATE, ['1'])
    t.equal((await me(old)).statusCode, 401, 'deleted')
    t.equal((await login(ada, password)).statusCode, 401, 'a deleted account cannot log in')
    await pool.query('UPDATE users SET deleted_at = NULL WHERE id = 1')
    t.equal((await me(old)).statusCode, 401, 'restored: the token from before stays dead')
    t.equal((await me(await token(ada, password))).statusCode, 200, 'a new login works')
  })

  await t.test('a condition change alone only suspends: that is why the README advances the version', async (t) => {
    const bob = await token('bob@example.com', 'bob has a long passphrase')
    await pool.query('UPDATE users SET banned = true WHERE id = 2')
    t.equal((await me(bob)).statusCode, 401)
    await pool.query('UPDATE users SET banned = false WHERE id = 2')
    t.equal((await me(bob)).statusCode, 200)
  })

  await t.test('a token naming an id of another shape is just invalid', async (t) => {
    for (const sub of ['abc', '1.5', '99999999999999999999', '']) {
      // findById runs beside the session check, so the odd id reaches the store either way.
      const forged = forgeJwt({ alg: 'HS256', typ: 'at+jwt', kid: secretKeyId(SECRET) }, validClaims(sub, 'no-such-session'), SECRET)
      const response = await me(forged)
      t.equal(response.statusCode, 401, `sub ${JSON.stringify(sub)}`)
      t.equal(response.json().code, 'FST_PWAUTH_TOKEN_INVALID')
    }
    t.equal(await accounts.findById('abc'), null)
  })
})

t.test('a mapped store refuses what its table cannot do, with clear errors', { skip }, async (t) => {
  const { pool } = await postgresSchema(t, 'existing_refusals', { max: 2 })
  await pool.query(USERS_SQL)
  const users = new PostgresAccountStore({ pool, ...USERS })
  await t.rejects(users.setActive('1', false), { name: 'TypeError', message: /setActive\(\) needs a boolean active column/ })
  await t.rejects(users.add({ email: 'a@example.com', passwordHash: HASH, active: false }), /cannot set "active"/)
  await t.rejects(users.add({ email: 'a@example.com', passwordHash: HASH, id: 'abc' }), /id "abc" is not a valid bigint/)
  t.equal(await users.updatePasswordHash({ id: 'abc', expectedHash: HASH, newHash: HASH, advanceCredentialVersion: true }), false)

  await t.test('add() writes the mapped columns; your other columns take their defaults', async (t) => {
    await pool.query("ALTER TABLE users ALTER COLUMN display_name SET DEFAULT 'New user'")
    const added = await users.add({ email: ' New@Example.com ', passwordHash: HASH })
    t.match(added, { email: 'new@example.com', active: true, credentialVersion: 0, displayName: 'New user', plan: 'free', passwordHash: HASH })
    t.same(await users.add({ email: 'other@example.com', passwordHash: HASH, id: added!.id }, { ifAbsent: true }), null)
    t.match(await users.add({ email: 'other@example.com', passwordHash: HASH, id: '77' }), { id: '77' })
  })

  await t.test('an e-mail shared by two accounts in different cases fails loudly instead of picking one', async (t) => {
    await pool.query('DROP INDEX users_email_address_lower_key')
    await pool.query("INSERT INTO users (email_address, pw, display_name) VALUES ('twin@example.com', $1, 'A'), ('TWIN@example.com', $1, 'B')", [HASH])
    await t.rejects(users.findByEmail('twin@example.com'), /several accounts have this e-mail address/)
  })
})
