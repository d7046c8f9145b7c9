import t, { type Test } from 'tap'
import { createPostgresSchema, PostgresMfaStore, PostgresOneTimeTokenStore, PostgresSessionStore } from '../../../lib/stores/postgres/index.js'
import { RedisMfaStore, RedisOneTimeTokenStore, RedisSessionStore } from '../../../lib/stores/redis/index.js'
import { expectProblem } from '../../helpers/problem.js'
import { interleaveLoginWithSwitch } from '../../helpers/mfa-race.js'
import { deleteKeys, postgresSchema, postgresUnavailable, redisClient, redisUnavailable } from '../../helpers/services.js'

// Contract §15: switching two factors on or off refuses every other session, including one a racing Login was
// still creating, in every store: the Login reads the switch again once its session exists (test/mfa/mfa-switches.test.ts
// runs the same interleavings on the memory stores).

const PREFIX = `test:${process.pid}:${Date.now().toString(36)}:race:`

for (const [name, skip, stores] of [
  ['PostgreSQL', postgresUnavailable, async (t: Test) => {
    const { pool } = await postgresSchema(t, 'mfa_race')
    await createPostgresSchema(pool)
    return { sessions: new PostgresSessionStore({ pool }), mfaStore: new PostgresMfaStore({ pool }), oneTimeTokens: new PostgresOneTimeTokenStore({ pool }) }
  }],
  ['Redis', redisUnavailable, async (t: Test) => {
    const client = redisClient(t)
    const prefix = `${PREFIX}${Math.random().toString(36).slice(2)}:`
    t.teardown(async () => { await deleteKeys(client, prefix) })
    return {
      sessions: new RedisSessionStore({ client, prefix: `${prefix}sessions:` }),
      mfaStore: new RedisMfaStore({ client, prefix: `${prefix}mfa:` }),
      oneTimeTokens: new RedisOneTimeTokenStore({ client, prefix: `${prefix}one-time:` })
    }
  }]
] as const) {
  t.test(`${name}: a Login racing Confirm ends its own session and answers the challenge`, { skip }, async (t) => {
    const { login, sessions, ada, switchedBy } = await interleaveLoginWithSwitch(t, 'confirm', await stores(t))
    t.same(Object.keys(login.json()).sort(), ['mfaExpiresIn', 'mfaRequired', 'mfaToken'])
    t.same((await sessions.list(ada.id)).map((session) => session.id), [switchedBy])
  })

  t.test(`${name}: a LoginMfa racing Disable ends its own session`, { skip }, async (t) => {
    const { login, sessions, ada, switchedBy } = await interleaveLoginWithSwitch(t, 'disable', await stores(t))
    expectProblem(t, login, 401, 'FST_PWAUTH_MFA_CODE_INVALID')
    t.same((await sessions.list(ada.id)).map((session) => session.id), [switchedBy])
  })
}
