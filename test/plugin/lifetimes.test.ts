import Fastify from 'fastify'
import t from 'tap'
import passwordAuth from '../../lib/index.js'
import { readConfig } from '../../example/config.js'
import { authOptions, PLUGIN_TIMEOUT_MS } from '../helpers/app.js'

// Every lifetime option and environment variable accepts values from 1 s: no floor of 30 or 60 s.
t.test('every lifetime option accepts 1 second', async (t) => {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(passwordAuth, {
    ...await authOptions(),
    mfa: { ttl: 1, trustDays: 1 / 86_400 },
    passkeys: { rpId: 'localhost', rpName: 'Test', origins: ['http://localhost:3000'], ttl: 1 },
    passwordReset: { ttl: 1 },
    deliver: () => {},
    registration: { ttl: 1 },
    account: { emailChange: true, verifyTtl: 1, revertTtl: 1 },
    reauthMaxAge: 1,
    refresh: { idleTimeout: 1, maxLifetime: 1 },
    throttle: { blockSeconds: 1, maxBlockSeconds: 1, forgetAfterSeconds: 1, deviceTtl: 1 },
    jwt: { secret: 'a-test-secret-of-at-least-32-bytes-long', expiresIn: 1 }
  })
  await app.ready()
  t.pass('registered')
})

t.test('a 1-second token lifetime registers even when a second ends between the probe token\'s signing and its check', async (t) => {
  const { now } = Date
  let clock = Math.floor(now() / 1000) * 1000 + 999
  // Every reading of the clock during the registration is 0.4 s after the one before.
  Date.now = () => (clock += 400)
  t.teardown(() => { Date.now = now })
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  await app.register(passwordAuth, { ...await authOptions(), jwt: { secret: 'a-test-secret-of-at-least-32-bytes-long', expiresIn: 1 } })
  Date.now = now
  t.pass('registered')
})

t.test('every lifetime environment variable of the example server accepts 1 second', async (t) => {
  const names = ['AUTH_TOKEN_TTL', 'AUTH_SESSION_IDLE_TTL', 'AUTH_SESSION_MAX_TTL', 'AUTH_REAUTH_MAX_AGE', 'AUTH_RESET_TTL', 'AUTH_VERIFY_TTL', 'AUTH_DEVICE_TTL', 'AUTH_MFA_TTL']
  const config = readConfig(Object.fromEntries(names.map((name) => [name, '1'])))
  t.same([config.tokenTtl, config.sessionIdleTtl, config.sessionMaxTtl, config.reauthMaxAge, config.resetTtl, config.verifyTtl, config.deviceTtl, config.mfaTtl], names.map(() => 1))
})
