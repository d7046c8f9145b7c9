import t, { type Test } from 'tap'
import type { OneTimeTokenStore } from '../../../lib/index.js'
import { createPostgresSchema, PostgresOneTimeTokenStore } from '../../../lib/stores/postgres/index.js'
import { RedisOneTimeTokenStore } from '../../../lib/stores/redis/index.js'
import { accountApp } from '../../helpers/account.js'
import { EMAIL, NEW_PASSWORD, PASSWORD } from '../../helpers/app.js'
import { expectProblem } from '../../helpers/problem.js'
import { deleteKeys, postgresSchema, postgresUnavailable, redisClient, redisUnavailable } from '../../helpers/services.js'

const T1 = 'taker1@example.net'
const T2 = 'taker2@example.net'
const TAKERS_PASSWORD = 'the taker\'s own passphrase'
const revertBody = (token: string, newPassword: string): Record<string, string> => ({ token, newPassword, confirmNewPassword: newPassword })

const STORES: Array<{ name: string, skip: string | false, create: (t: Test) => Promise<OneTimeTokenStore> }> = [
  {
    name: 'PostgreSQL',
    skip: postgresUnavailable,
    async create (t) {
      const { pool } = await postgresSchema(t, 'email_revert')
      await createPostgresSchema(pool)
      return new PostgresOneTimeTokenStore({ pool })
    }
  },
  {
    name: 'Redis',
    skip: redisUnavailable,
    async create (t) {
      const prefix = `test:email-revert:${process.pid}:${Date.now().toString(36)}:`
      const client = redisClient(t)
      t.teardown(async () => { await deleteKeys(client, prefix) })
      return new RedisOneTimeTokenStore({ client, prefix })
    }
  }
]

for (const { name, skip, create } of STORES) {
  t.test(`${name}: a taker who moved the account A → T1 → T2 cannot take it back with T1's revert link, before the owner's revert, with it or after it`, { skip }, async (t) => {
    const app = await accountApp(t, { oneTimeTokens: await create(t) })
    const { post, changeToken, token, message, accounts, ada, login, messages } = app
    const taker = await token()
    t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(taker, T1) })).statusCode, 204)
    const owners = (await message('email_changed', EMAIL)).token!
    t.equal((await post('/VerifyEmailChange', undefined, { token: await changeToken(taker, T2) })).statusCode, 204)
    const takers = (await message('email_changed', T1)).token!
    expectProblem(t, await post('/RevertEmailChange', undefined, revertBody(takers, TAKERS_PASSWORD)), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'not before the owner\'s')
    t.equal((await accounts.findById(ada.id))!.email, T2)

    // Both at once, the taker's first: one revert, the owner's.
    const statuses = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
      const [link, password] = i % 2 === 1 ? [owners, NEW_PASSWORD] : [takers, TAKERS_PASSWORD]
      return { owner: i % 2 === 1, status: (await post('/RevertEmailChange', undefined, revertBody(link, password))).statusCode }
    }))
    t.same(statuses.filter(({ status }) => status === 204), [{ owner: true, status: 204 }], JSON.stringify(statuses))
    expectProblem(t, await post('/RevertEmailChange', undefined, revertBody(takers, TAKERS_PASSWORD)), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'nor after it')
    t.equal((await accounts.findById(ada.id))!.email, EMAIL)
    t.equal((await login(EMAIL, NEW_PASSWORD)).statusCode, 200)

    // The addresses the account left (by the changes, and T2 by the revert) hear of its deletion.
    const owner = await token(EMAIL, NEW_PASSWORD)
    t.equal((await post('/DeleteAccount', owner, { password: NEW_PASSWORD })).statusCode, 204)
    await message('account_deleted', EMAIL)
    t.same(messages.filter((m) => m.type === 'account_deleted').map((m) => m.to).sort(), [EMAIL, T1, T2])
  })

  t.test(`${name}: a newer ChangeEmail ends the pending one whatever its address`, { skip }, async (t) => {
    const { post, changeToken, token } = await accountApp(t, { oneTimeTokens: await create(t) })
    const access = await token()
    const older = await changeToken(access, 'older@example.net')
    t.equal((await post('/ChangeEmail', access, { newEmail: EMAIL, password: PASSWORD })).statusCode, 202)
    expectProblem(t, await post('/VerifyEmailChange', undefined, { token: older }), 400, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID')
  })
}
