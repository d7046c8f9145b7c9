import { randomBytes } from 'node:crypto'
import { days, integer, list, onOff, oneOf, origins, rpId, secrets, text, url } from './env-values.js'

/** The example server's settings, from the environment (example/docs/example-server.md lists them). */
export interface ServerConfig {
  port: number
  host: string
  jwtSecret: string
  /** True when JWT_SECRET was unset and a random one was made for this start. */
  jwtSecretGenerated: boolean
  /** JWT_PREVIOUS_SECRETS: secrets that still verify tokens (and refresh tokens) but no longer sign. */
  jwtPreviousSecrets: string[]
  accountsFile: string | undefined
  tokenTtl: number | undefined
  rateLimit: boolean
  databaseUrl: string | undefined
  redisUrl: string | undefined
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /** REQUEST_LOGGING=on: Fastify's per-request log lines (off by default; audit events are logged either way). */
  requestLogging: boolean
  /** AUTH_REFRESH=off turns refresh tokens off. */
  refresh: boolean
  sessionIdleTtl: number | undefined
  sessionMaxTtl: number | undefined
  refreshGrace: number | undefined
  /** Seconds a password proof counts as recent for ending sessions (AUTH_REAUTH_MAX_AGE). */
  reauthMaxAge: number | undefined
  refreshCookie: boolean
  /** Seconds a client has to send a whole request (example/timeouts.ts). */
  requestTimeout: number
  /** AUTH_MAIL_OUTBOX, SMTP_URL, MAIL_FROM, APP_URL: where messages go and what their links point to (example/mailer.ts). */
  mailOutbox: string | undefined
  smtpUrl: string | undefined
  mailFrom: string
  /** Undefined: the address the server listens on (known once it listens: PORT=0 picks a free port). */
  appUrl: string | undefined
  resetTtl: number | undefined
  verifyTtl: number | undefined
  mailLimit: number | undefined
  deviceTtl: number | undefined
  /** AUTH_MFA_TTL: seconds a Login's second-factor challenge lives; AUTH_APP_NAME: the issuer authenticator apps show. */
  mfaTtl: number | undefined
  mfaIssuer: string
  /** AUTH_PASSKEY_RP_ID, AUTH_PASSKEY_ORIGINS (comma-separated exact origins), AUTH_PASSKEY_TTL: the passkeys' relying party. */
  passkeyRpId: string
  passkeyOrigins: string[]
  passkeyTtl: number | undefined
  /** AUTH_ACCOUNT_SELF_SERVICE=off turns e-mail change, deletion and export off; AUTH_REVERT_TTL: seconds a revert link lives. */
  accountSelfService: boolean
  revertTtl: number | undefined,
  /** AUTH_MFA_TRUST_DAYS: days a LoginMfa with rememberDevice trusts its device (default 30; 0 off; fractions to the second). */
  mfaTrustDays: number
  /** AUTH_PWNED_RANGE_URL: the breached-password range service (contract §20), unset for none; AUTH_PWNED_TIMEOUT_MS: its timeout. */
  pwnedRangeUrl: string | undefined
  pwnedTimeoutMs: number | undefined
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** An idle timeout above the absolute lifetime cannot work: said with the variables (and the default that was used). */
function sessionLifetimes (env: NodeJS.ProcessEnv): { sessionIdleTtl: number | undefined, sessionMaxTtl: number | undefined } {
  const sessionIdleTtl = integer(env, 'AUTH_SESSION_IDLE_TTL', 1, 400 * 86_400)
  const sessionMaxTtl = integer(env, 'AUTH_SESSION_MAX_TTL', 1, 400 * 86_400)
  const idle = sessionIdleTtl ?? 604_800
  const max = sessionMaxTtl ?? 2_592_000
  if (idle > max) {
    throw new Error(`AUTH_SESSION_IDLE_TTL (${idle}${sessionIdleTtl === undefined ? ', its default: set it too' : ''}) must not exceed AUTH_SESSION_MAX_TTL (${max}${sessionMaxTtl === undefined ? ', its default' : ''})`)
  }
  return { sessionIdleTtl, sessionMaxTtl }
}

/**
 * DATABASE_URL: PostgreSQL (postgres://…), MySQL or MariaDB (mysql://…), or a SQLite file (sqlite:<file>), which serves this one process: then
 * every store is in the file, and REDIS_URL (state shared with other instances) cannot go with it.
 */
function databases (env: NodeJS.ProcessEnv): { databaseUrl: string | undefined, redisUrl: string | undefined } {
  const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:'], 'redis://127.0.0.1:6379', { query: true })
  const raw = text(env, 'DATABASE_URL')
  if (raw === undefined || !raw.startsWith('sqlite:')) {
    return { databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:', 'mysql:'], 'postgres://user@127.0.0.1:5432/app (or mysql://user@127.0.0.1:3306/app, or sqlite:./data/auth.db)', { query: true }), redisUrl }
  }
  if (sqliteFile(raw) === '') throw new Error(`DATABASE_URL must name a file after sqlite:, such as sqlite:./data/auth.db, not "${raw}"`)
  if (redisUrl !== undefined) {
    throw new Error('DATABASE_URL=sqlite:… cannot go with REDIS_URL: SQLite serves one server process, and Redis is for state that several instances share ' +
      '(use PostgreSQL with Redis, or SQLite alone)')
  }
  return { databaseUrl: raw, redisUrl }
}

/** The file of DATABASE_URL=sqlite:<file> (`sqlite://<file>` too), as given: relative to the working directory. */
export function sqliteFile (databaseUrl: string): string {
  return databaseUrl.slice('sqlite:'.length).replace(/^\/\//, '')
}

function appName (env: NodeJS.ProcessEnv): string {
  const name = text(env, 'AUTH_APP_NAME') ?? 'fastify-password-auth example'
  if (name.trim() === '' || name.length > 100 || name.includes(':')) {
    throw new Error(`AUTH_APP_NAME must be a name of 1 to 100 characters without ":" (authenticator apps show it), not "${name}"`)
  }
  return name
}

function mailFrom (env: NodeJS.ProcessEnv): string {
  const from = text(env, 'MAIL_FROM') ?? 'fastify-password-auth example <no-reply@localhost>'
  if (!/^(?:[^<>]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(from.trim())) {
    throw new Error(`MAIL_FROM must be an address, such as no-reply@example.com or "Example <no-reply@example.com>", not "${from}"`)
  }
  return from
}

/** Every bad value stops the server with a message naming its variable. */
export function readConfig (env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const jwtSecret = text(env, 'JWT_SECRET')
  const port = integer(env, 'PORT', 0, 65535) ?? 3000
  const passkeyRpId = rpId('AUTH_PASSKEY_RP_ID', text(env, 'AUTH_PASSKEY_RP_ID') ?? 'localhost')
  return {
    port,
    host: text(env, 'HOST') ?? '127.0.0.1',
    jwtSecret: jwtSecret === undefined ? randomBytes(32).toString('base64url') : secrets('JWT_SECRET', [jwtSecret])[0]!,
    jwtSecretGenerated: jwtSecret === undefined,
    jwtPreviousSecrets: secrets('JWT_PREVIOUS_SECRETS', list(env, 'JWT_PREVIOUS_SECRETS') ?? []),
    accountsFile: text(env, 'AUTH_ACCOUNTS_FILE'),
    tokenTtl: integer(env, 'AUTH_TOKEN_TTL', 1, 86_400),
    rateLimit: onOff(env, 'AUTH_RATE_LIMIT', 'on'),
    ...databases(env),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    requestLogging: onOff(env, 'REQUEST_LOGGING', 'off'),
    refresh: onOff(env, 'AUTH_REFRESH', 'on'),
    ...sessionLifetimes(env),
    refreshGrace: integer(env, 'AUTH_REFRESH_GRACE', 0, 300),
    reauthMaxAge: integer(env, 'AUTH_REAUTH_MAX_AGE', 1, 86_400),
    refreshCookie: onOff(env, 'AUTH_REFRESH_COOKIE', 'off'),
    requestTimeout: integer(env, 'REQUEST_TIMEOUT', 1, 300) ?? 10,
    mailOutbox: text(env, 'AUTH_MAIL_OUTBOX'),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:'], 'smtp://user:password@mail.example.com:587', { query: true }),
    mailFrom: mailFrom(env),
    appUrl: url(env, 'APP_URL', ['http:', 'https:'], 'https://app.example.com or http://localhost:3000')?.replace(/\/+$/, ''),
    resetTtl: integer(env, 'AUTH_RESET_TTL', 1, 86_400),
    verifyTtl: integer(env, 'AUTH_VERIFY_TTL', 1, 30 * 86_400),
    mailLimit: integer(env, 'AUTH_MAIL_LIMIT', 1, 1000),
    deviceTtl: integer(env, 'AUTH_DEVICE_TTL', 1, 400 * 86_400),
    mfaTtl: integer(env, 'AUTH_MFA_TTL', 1, 3600),
    mfaIssuer: appName(env),
    accountSelfService: onOff(env, 'AUTH_ACCOUNT_SELF_SERVICE', 'on'),
    revertTtl: integer(env, 'AUTH_REVERT_TTL', 1, 30 * 86_400),
    passkeyRpId,
    // Browsers refuse passkeys on an IP address: the page is http://localhost:<PORT>, not http://127.0.0.1:<PORT>.
    passkeyOrigins: origins('AUTH_PASSKEY_ORIGINS', list(env, 'AUTH_PASSKEY_ORIGINS') ?? [`http://localhost:${port}`], passkeyRpId, 'AUTH_PASSKEY_RP_ID'),
    passkeyTtl: integer(env, 'AUTH_PASSKEY_TTL', 1, 3600),
    mfaTrustDays: days(env, 'AUTH_MFA_TRUST_DAYS', 400) ?? 30,
    pwnedRangeUrl: url(env, 'AUTH_PWNED_RANGE_URL', ['http:', 'https:'], 'https://api.pwnedpasswords.com/range/'),
    pwnedTimeoutMs: integer(env, 'AUTH_PWNED_TIMEOUT_MS', 1, 60_000)
  }
}
