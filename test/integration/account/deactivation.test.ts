import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { hashPassword } from '../../../lib/index.js'
import { accountsTriggerSql, createPostgresSchema, PostgresAccountStore } from '../../../lib/stores/postgres/index.js'
import { buildTestApp, CHEAP_ARGON2, EMAIL, PASSWORD, type TestApp } from '../../helpers/app.js'
import { postgresSchema, postgresUnavailable } from '../../helpers/services.js'

// Issue 12, finding 6: a token issued before a deactivation must not work again after a reactivation.
async function deactivateThenReactivate (t: Test, app: TestApp, id: string, setActive: (active: boolean) => Promise<unknown>): Promise<void> {
  const status = async (response: Promise<LightMyRequestResponse>): Promise<number> => (await response).statusCode
  const before = await app.token()
  t.equal(await status(app.me(before)), 200)
  await setActive(false)
  t.equal(await status(app.me(before)), 401, 'deactivated: the token fails')
  t.equal(await status(app.login()), 401, 'deactivated: no login')
  await setActive(true)
  t.equal(await status(app.me(before)), 401, 'reactivated: the token from before stays dead')
  const after = await app.token()
  t.equal(await status(app.me(after)), 200, 'a new login works')
  t.equal((await app.me(after)).json().id, id)
}

t.test('memory store: setActive(false) ends the sessions for good', async (t) => {
  const app = await buildTestApp(t)
  await deactivateThenReactivate(t, app, app.ada.id, async (active) => app.accounts.setActive(app.ada.id, active))
})

t.test('PostgreSQL', { skip: postgresUnavailable }, async (t) => {
  const { pool } = await postgresSchema(t, 'deactivation')
  await createPostgresSchema(pool)
  const accounts = new PostgresAccountStore({ pool })
  const app = await buildTestApp(t, { auth: { accounts } })

  await t.test('setActive(false) ends the sessions for good', async (t) => {
    const ada = await accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
    await deactivateThenReactivate(t, app, ada!.id, async (active) => await accounts.setActive(ada!.id, active))
    t.equal((await accounts.findById(ada!.id))?.credentialVersion, 1, 'advanced once: the trigger did not add a second step')
  })

  await t.test('so does a plain UPDATE of the plugin\'s table, through the trigger', async (t) => {
    const { rows: [{ id }] } = await pool.query('SELECT id::text FROM auth_accounts WHERE email = $1', [EMAIL])
    await deactivateThenReactivate(t, app, id, async (active) => await pool.query('UPDATE auth_accounts SET active = $1 WHERE id = $2', [active, id]))
    t.equal((await accounts.findById(id))?.credentialVersion, 2)
    await pool.query('UPDATE auth_accounts SET active = false, credential_version = credential_version + 1 WHERE id = $1', [id])
    t.equal((await accounts.findById(id))?.credentialVersion, 3, 'an UPDATE that advances the version itself is not advanced twice')
    await pool.query('UPDATE auth_accounts SET active = false WHERE id = $1', [id])
    t.equal((await accounts.findById(id))?.credentialVersion, 3, 'deactivating an inactive account changes nothing')
  })

  await t.test('and an UPDATE of a mapped table that has the trigger of accountsTriggerSql', async (t) => {
    const mapping = { table: 'staff', idType: 'bigint', columns: { active: 'enabled', credentialVersion: 'sessions_version' } } as const
    await pool.query(`CREATE TABLE staff (id bigserial PRIMARY KEY, email text NOT NULL UNIQUE, password_hash text NOT NULL,
      enabled boolean, sessions_version integer NOT NULL DEFAULT 0);\n${accountsTriggerSql(mapping)}`)
    const staff = new PostgresAccountStore({ pool, ...mapping })
    const mapped = await buildTestApp(t, { auth: { accounts: staff } })
    const { id } = (await staff.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) }))!
    await deactivateThenReactivate(t, mapped, id, async (active) => await pool.query('UPDATE staff SET enabled = $1 WHERE id = $2', [active, id]))
    await pool.query('UPDATE staff SET enabled = NULL WHERE id = $1', [id])
    t.match(await staff.findById(id), { active: false, credentialVersion: 2 }, 'NULL counts as inactive, and ends the sessions too')
  })
})
