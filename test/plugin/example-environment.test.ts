import t from 'tap'
import { pageAddress } from '../../example/address.js'
import { readConfig } from '../../example/config.js'
import { repoFile } from '../helpers/docs.js'

/**
 * A bad value of every variable the example server guide lists, each refused with a message that names its
 * variable. The ones only a start can find wrong (a file, an address, a server) are in
 * test/integration/example/example.test.ts, which starts a process for each.
 */
const BAD: Record<string, Array<Record<string, string>>> = {
  PORT: [{ PORT: 'eighty' }, { PORT: '70000' }],
  JWT_SECRET: [{ JWT_SECRET: 'too-short' }],
  JWT_PREVIOUS_SECRETS: [{ JWT_PREVIOUS_SECRETS: `${'x'.repeat(32)},short` }],
  AUTH_TOKEN_TTL: [{ AUTH_TOKEN_TTL: '0' }, { AUTH_TOKEN_TTL: '15m' }],
  AUTH_REFRESH: [{ AUTH_REFRESH: 'yes' }],
  AUTH_SESSION_IDLE_TTL: [{ AUTH_SESSION_IDLE_TTL: '0' }, { AUTH_SESSION_IDLE_TTL: '60', AUTH_SESSION_MAX_TTL: '30' }],
  AUTH_SESSION_MAX_TTL: [{ AUTH_SESSION_MAX_TTL: 'a month' }],
  AUTH_REFRESH_GRACE: [{ AUTH_REFRESH_GRACE: '301' }],
  AUTH_REFRESH_COOKIE: [{ AUTH_REFRESH_COOKIE: 'true' }],
  AUTH_REAUTH_MAX_AGE: [{ AUTH_REAUTH_MAX_AGE: '0' }],
  AUTH_RATE_LIMIT: [{ AUTH_RATE_LIMIT: 'maybe' }],
  AUTH_RESET_TTL: [{ AUTH_RESET_TTL: '-1' }],
  AUTH_VERIFY_TTL: [{ AUTH_VERIFY_TTL: '1.5' }],
  AUTH_MAIL_LIMIT: [{ AUTH_MAIL_LIMIT: '0' }],
  AUTH_DEVICE_TTL: [{ AUTH_DEVICE_TTL: 'forever' }],
  AUTH_MFA_TTL: [{ AUTH_MFA_TTL: '3601' }],
  AUTH_APP_NAME: [{ AUTH_APP_NAME: 'Example: the app' }, { AUTH_APP_NAME: 'x'.repeat(101) }],
  AUTH_ACCOUNT_SELF_SERVICE: [{ AUTH_ACCOUNT_SELF_SERVICE: 'no' }],
  AUTH_REVERT_TTL: [{ AUTH_REVERT_TTL: '0' }],
  AUTH_PASSKEY_RP_ID: [{ AUTH_PASSKEY_RP_ID: '127.0.0.1' }, { AUTH_PASSKEY_RP_ID: 'https://example.com' }, { AUTH_PASSKEY_RP_ID: 'Example.com' }],
  AUTH_PASSKEY_ORIGINS: [
    { AUTH_PASSKEY_ORIGINS: 'http://127.0.0.1:3000' },
    { AUTH_PASSKEY_ORIGINS: 'localhost:3000' },
    { AUTH_PASSKEY_ORIGINS: 'http://localhost:3000/' },
    { AUTH_PASSKEY_RP_ID: 'example.com', AUTH_PASSKEY_ORIGINS: 'http://example.com' },
    { AUTH_PASSKEY_RP_ID: 'example.com' }
  ],
  AUTH_PASSKEY_TTL: [{ AUTH_PASSKEY_TTL: '0' }],
  AUTH_MFA_TRUST_DAYS: [{ AUTH_MFA_TRUST_DAYS: 'a month' }, { AUTH_MFA_TRUST_DAYS: '-1' }, { AUTH_MFA_TRUST_DAYS: '401' }, { AUTH_MFA_TRUST_DAYS: '0.000001' }],
  AUTH_PWNED_RANGE_URL: [{ AUTH_PWNED_RANGE_URL: 'api.pwnedpasswords.com/range/' }, { AUTH_PWNED_RANGE_URL: 'https://api.pwnedpasswords.com/range/?x=1' }],
  AUTH_PWNED_TIMEOUT_MS: [{ AUTH_PWNED_TIMEOUT_MS: '0' }],
  SMTP_URL: [{ SMTP_URL: 'mail.example.com:587' }, { SMTP_URL: 'http://mail.example.com' }],
  MAIL_FROM: [{ MAIL_FROM: 'no-reply' }, { MAIL_FROM: 'Example <no-reply>' }],
  APP_URL: [{ APP_URL: 'example.com' }, { APP_URL: 'localhost:3000' }, { APP_URL: 'ftp://example.com' }, { APP_URL: 'https://example.com/#x' }],
  DATABASE_URL: [{ DATABASE_URL: '127.0.0.1:5432/app' }, { DATABASE_URL: 'mongodb://127.0.0.1/app' }, { DATABASE_URL: 'sqlite:' }, { DATABASE_URL: 'sqlite:a.db', REDIS_URL: 'redis://r' }],
  REDIS_URL: [{ REDIS_URL: '127.0.0.1:6379' }, { REDIS_URL: 'http://127.0.0.1:6379' }],
  LOG_LEVEL: [{ LOG_LEVEL: 'loud' }, { LOG_LEVEL: 'INFO' }],
  REQUEST_LOGGING: [{ REQUEST_LOGGING: 'yes' }],
  REQUEST_TIMEOUT: [{ REQUEST_TIMEOUT: '0' }]
}

/** Found wrong only by starting: test/integration/example/example.test.ts starts the server with a bad value of each. */
const AT_START = ['HOST', 'AUTH_ACCOUNTS_FILE', 'AUTH_MAIL_OUTBOX', 'DATABASE_URL']

/** The variables of the guide's table. */
const documented = [...repoFile('example/docs/example-server.md').matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]!)

t.test('every bad value of every variable stops the server with a message naming the variable', async (t) => {
  t.ok(documented.length > 30, `${documented.length} variables in the guide`)
  for (const name of documented) {
    t.ok(BAD[name] !== undefined || AT_START.includes(name), `${name}: a bad value is tested`)
    for (const env of BAD[name] ?? []) {
      t.throws(() => readConfig(env), { message: new RegExp(`^${name}\\b`) }, `${JSON.stringify(env)} names ${name}`)
    }
  }
  t.same(Object.keys(BAD).filter((name) => !documented.includes(name)), [], 'every variable tested is in the guide')
})

t.test('the messages say what a good value looks like', async (t) => {
  t.throws(() => readConfig({ APP_URL: 'example.com' }), { message: 'APP_URL must be an address starting with http:// or https://, such as https://app.example.com or http://localhost:3000, not "example.com"' })
  t.throws(() => readConfig({ JWT_SECRET: 'short' }), { message: 'JWT_SECRET must be at least 32 bytes long, e.g. $(openssl rand -base64 48)' })
  t.throws(() => readConfig({ AUTH_SESSION_MAX_TTL: '30' }), { message: 'AUTH_SESSION_IDLE_TTL (604800, its default: set it too) must not exceed AUTH_SESSION_MAX_TTL (30)' })
  t.throws(() => readConfig({ AUTH_PASSKEY_RP_ID: 'example.com' }), { message: /^AUTH_PASSKEY_ORIGINS: http:\/\/localhost:3000 is not on AUTH_PASSKEY_RP_ID \(example\.com\)/ })
})

t.test('good values pass: defaults, service URLs with a query, a path under APP_URL', async (t) => {
  const defaults = readConfig({})
  t.match(defaults, { port: 3000, host: '127.0.0.1', passkeyRpId: 'localhost', passkeyOrigins: ['http://localhost:3000'], appUrl: undefined, logLevel: 'info' })
  t.same(readConfig({ PORT: '4000' }).passkeyOrigins, ['http://localhost:4000'], 'the origin follows PORT')
  t.equal(readConfig({ APP_URL: 'https://example.com/portal/' }).appUrl, 'https://example.com/portal')
  t.equal(readConfig({ DATABASE_URL: 'postgres://u@db/app?sslmode=require' }).databaseUrl, 'postgres://u@db/app?sslmode=require')
  t.equal(readConfig({ DATABASE_URL: 'sqlite:./data/auth.db' }).databaseUrl, 'sqlite:./data/auth.db')
  t.equal(readConfig({ REDIS_URL: 'rediss://cache:6380/1' }).redisUrl, 'rediss://cache:6380/1')
  t.equal(readConfig({ MAIL_FROM: 'Example <no-reply@example.com>' }).mailFrom, 'Example <no-reply@example.com>')
  t.same(readConfig({ AUTH_PASSKEY_RP_ID: 'example.com', AUTH_PASSKEY_ORIGINS: 'https://example.com, https://app.example.com' }).passkeyOrigins,
    ['https://example.com', 'https://app.example.com'])
  t.same(readConfig({ JWT_PREVIOUS_SECRETS: ` ${'a'.repeat(32)} ,, ${'b'.repeat(32)}` }).jwtPreviousSecrets, ['a'.repeat(32), 'b'.repeat(32)])
})

t.test('the page\'s address is http://localhost:<port> wherever localhost reaches the server (passkeys refuse an IP address)', async (t) => {
  for (const host of ['127.0.0.1', 'localhost', '0.0.0.0', '::', '::1']) t.equal(pageAddress(host, 3000), 'http://localhost:3000', host)
  t.equal(pageAddress('192.168.1.20', 8080), 'http://192.168.1.20:8080', 'an address localhost does not reach stays as it is')
  t.equal(pageAddress('fd00::1', 8080), 'http://[fd00::1]:8080')
  t.equal(pageAddress('demo.internal', 8080), 'http://demo.internal:8080')
})
