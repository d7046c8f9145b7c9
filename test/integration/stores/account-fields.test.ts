import t from 'tap'
import { authenticate, hashPassword, MemoryAccountStore, type AccountStore } from '../../../lib/index.js'
import { createPostgresSchema, PostgresAccountStore } from '../../../lib/stores/postgres/index.js'
import { ADA_FIELDS } from '../../helpers/account-fields.js'
import { buildTestApp, CHEAP_ARGON2, EMAIL, PASSWORD } from '../../helpers/app.js'
import { postgresSchema, postgresUnavailable } from '../../helpers/services.js'

// helpers/account-fields.ts extends PasswordAuthAccount with displayName and plan, as a host would.

t.test('the memory store carries your own fields to request.account', async (t) => {
  const accounts = new MemoryAccountStore()
  const ada = accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2), ...ADA_FIELDS })
  const { app, me, token } = await buildTestApp(t, {
    auth: { accounts },
    routes: (app) => {
      app.get('/greeting', { onRequest: authenticate }, async (request) => `Hello ${request.account?.displayName ?? 'stranger'}`)
    }
  })
  const issued = await token()
  t.same((await me(issued)).json(), { id: ada.id, email: EMAIL, active: true, credentialVersion: 0, ...ADA_FIELDS })
  const greeting = await app.inject({ url: '/greeting', headers: { authorization: `Bearer ${issued}` } })
  t.equal(greeting.body, 'Hello Ada Lovelace', 'typed on request.account')
})

t.test('the PostgreSQL store reads them from the columns named in fields', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'fields', { max: 4 })
  await createPostgresSchema(pool)
  await pool.query("ALTER TABLE auth_accounts ADD COLUMN display_name text, ADD COLUMN \"Plan\" text NOT NULL DEFAULT 'free'")
  const accounts = new PostgresAccountStore({ pool, fields: { displayName: 'display_name', plan: 'Plan' } })
  const ada = await accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  await pool.query('UPDATE auth_accounts SET display_name = $1, "Plan" = $2 WHERE id = $3', [ADA_FIELDS.displayName, ADA_FIELDS.plan, ada!.id])
  const { me, token } = await buildTestApp(t, { auth: { accounts } })
  const response = await me(await token())
  t.same(response.json(), { id: ada!.id, email: EMAIL, active: true, credentialVersion: 0, ...ADA_FIELDS })
  t.notMatch(response.body, /argon2/)
})

t.test('a custom store whose findById returns the hash anyway never shows it on request.account', async (t) => {
  const inner = new MemoryAccountStore()
  const accounts: AccountStore = {
    findByEmail: async (email) => await inner.findByEmail(email),
    findById: async (id) => {
      const account = await inner.findById(id)
      return account === null ? null : await inner.findByEmail(account.email)
    },
    updatePasswordHash: async (update) => await inner.updatePasswordHash(update)
  }
  inner.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2), displayName: 'Ada' })
  const { app, token } = await buildTestApp(t, {
    auth: { accounts },
    routes: (app) => {
      app.get('/keys', { onRequest: authenticate }, async (request) => Object.keys(request.account ?? {}))
    }
  })
  const response = await app.inject({ url: '/keys', headers: { authorization: `Bearer ${await token()}` } })
  t.same(response.json().sort(), ['active', 'credentialVersion', 'displayName', 'email', 'id'])
})
