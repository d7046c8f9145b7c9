import { randomBytes } from 'node:crypto'

/** The example server's settings, from the environment (see README "Example server"). */
export interface ServerConfig {
  port: number
  host: string
  jwtSecret: string
  /** True when JWT_SECRET was unset and a random one was made for this start. */
  jwtSecretGenerated: boolean
  accountsFile: string | undefined
  tokenTtl: number | undefined
  rateLimit: boolean
  databaseUrl: string | undefined
  redisUrl: string | undefined
  logLevel: string
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

function text (env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]
  return raw === undefined || raw === '' ? undefined : raw
}

export function readConfig (env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const rateLimit = text(env, 'AUTH_RATE_LIMIT') ?? 'on'
  if (rateLimit !== 'on' && rateLimit !== 'off') throw new Error(`AUTH_RATE_LIMIT must be "on" or "off", not "${rateLimit}"`)
  const jwtSecret = text(env, 'JWT_SECRET')
  return {
    port: integer(env, 'PORT', 0, 65535) ?? 3000,
    host: text(env, 'HOST') ?? '127.0.0.1',
    jwtSecret: jwtSecret ?? randomBytes(32).toString('base64url'),
    jwtSecretGenerated: jwtSecret === undefined,
    accountsFile: text(env, 'AUTH_ACCOUNTS_FILE'),
    tokenTtl: integer(env, 'AUTH_TOKEN_TTL', 1, 86_400),
    rateLimit: rateLimit === 'on',
    databaseUrl: text(env, 'DATABASE_URL'),
    redisUrl: text(env, 'REDIS_URL'),
    logLevel: text(env, 'LOG_LEVEL') ?? 'info'
  }
}
