import { randomBytes } from 'node:crypto'

/** The example server's settings, from the environment (see README "Example server"). */
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
  logLevel: string
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

function integer (env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`)
  }
  return value
}

/** A number of days from 0 to `max`, fractions allowed down to one second (a test may trust a device for 2 s). */
function days (env: NodeJS.ProcessEnv, name: string, max: number): number | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  const value = Number(raw)
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || value > max || (value > 0 && Math.round(value * 86_400) < 1)) {
    throw new Error(`${name} must be a number of days from 0 to ${max} (0.0000116 is one second), not "${raw}"`)
  }
  return value
}

function text (env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]
  return raw === undefined || raw === '' ? undefined : raw
}

function onOff (env: NodeJS.ProcessEnv, name: string, fallback: 'on' | 'off'): boolean {
  const value = text(env, name) ?? fallback
  if (value !== 'on' && value !== 'off') throw new Error(`${name} must be "on" or "off", not "${value}"`)
  return value === 'on'
}

export function readConfig (env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const jwtSecret = text(env, 'JWT_SECRET')
  return {
    port: integer(env, 'PORT', 0, 65535) ?? 3000,
    host: text(env, 'HOST') ?? '127.0.0.1',
    jwtSecret: jwtSecret ?? randomBytes(32).toString('base64url'),
    jwtSecretGenerated: jwtSecret === undefined,
    jwtPreviousSecrets: (text(env, 'JWT_PREVIOUS_SECRETS') ?? '').split(',').map((secret) => secret.trim()).filter((secret) => secret !== ''),
    accountsFile: text(env, 'AUTH_ACCOUNTS_FILE'),
    tokenTtl: integer(env, 'AUTH_TOKEN_TTL', 1, 86_400),
    rateLimit: onOff(env, 'AUTH_RATE_LIMIT', 'on'),
    databaseUrl: text(env, 'DATABASE_URL'),
    redisUrl: text(env, 'REDIS_URL'),
    logLevel: text(env, 'LOG_LEVEL') ?? 'info',
    requestLogging: onOff(env, 'REQUEST_LOGGING', 'off'),
    refresh: onOff(env, 'AUTH_REFRESH', 'on'),
    sessionIdleTtl: integer(env, 'AUTH_SESSION_IDLE_TTL', 1, 400 * 86_400),
    sessionMaxTtl: integer(env, 'AUTH_SESSION_MAX_TTL', 1, 400 * 86_400),
    refreshGrace: integer(env, 'AUTH_REFRESH_GRACE', 0, 300),
    reauthMaxAge: integer(env, 'AUTH_REAUTH_MAX_AGE', 1, 86_400),
    refreshCookie: onOff(env, 'AUTH_REFRESH_COOKIE', 'off'),
    requestTimeout: integer(env, 'REQUEST_TIMEOUT', 1, 300) ?? 10,
    mailOutbox: text(env, 'AUTH_MAIL_OUTBOX'),
    smtpUrl: text(env, 'SMTP_URL'),
    mailFrom: text(env, 'MAIL_FROM') ?? 'fastify-password-auth example <no-reply@localhost>',
    appUrl: text(env, 'APP_URL')?.replace(/\/+$/, ''),
    resetTtl: integer(env, 'AUTH_RESET_TTL', 1, 86_400),
    verifyTtl: integer(env, 'AUTH_VERIFY_TTL', 1, 30 * 86_400),
    mailLimit: integer(env, 'AUTH_MAIL_LIMIT', 1, 1000),
    deviceTtl: integer(env, 'AUTH_DEVICE_TTL', 1, 400 * 86_400),
    mfaTtl: integer(env, 'AUTH_MFA_TTL', 1, 3600),
    mfaIssuer: text(env, 'AUTH_APP_NAME') ?? 'fastify-password-auth example',
    accountSelfService: onOff(env, 'AUTH_ACCOUNT_SELF_SERVICE', 'on'),
    revertTtl: integer(env, 'AUTH_REVERT_TTL', 1, 30 * 86_400),
    passkeyRpId: text(env, 'AUTH_PASSKEY_RP_ID') ?? 'localhost',
    passkeyOrigins: (text(env, 'AUTH_PASSKEY_ORIGINS') ?? `http://localhost:${integer(env, 'PORT', 0, 65535) ?? 3000}`)
      .split(',').map((origin) => origin.trim()).filter((origin) => origin !== ''),
    passkeyTtl: integer(env, 'AUTH_PASSKEY_TTL', 1, 3600),
    mfaTrustDays: days(env, 'AUTH_MFA_TRUST_DAYS', 400) ?? 30,
    pwnedRangeUrl: text(env, 'AUTH_PWNED_RANGE_URL'),
    pwnedTimeoutMs: integer(env, 'AUTH_PWNED_TIMEOUT_MS', 1, 60_000)
  }
}
