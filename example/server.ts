import type { AddressInfo } from 'node:net'
import { verify } from '@node-rs/argon2'
import { hashPassword, passwordAuthLogger, type AccountStore, type HashingStats } from '../lib/index.js'
import { demoAccount, readAccountsFile, type AccountSeed } from './accounts-file.js'
import { listenError, pageAddress } from './address.js'
import { buildApp } from './app.js'
import { boundMemoryUnderFloods } from './flood-memory.js'
import { createMailer } from './mailer.js'
import { readConfig } from './config.js'
import { createStores } from './stores/index.js'
import { serverTimeouts } from './timeouts.js'

/**
 * A demo account kept in a database from an earlier start gets this start's printed password, unless it
 * already has it: then its hash and sessions stay, as another instance started with the same secret expects.
 */
async function resetPassword (accounts: AccountStore, email: string, password: string, passwordHash: string): Promise<void> {
  const existing = await accounts.findByEmail(email)
  if (existing !== null && !await verify(existing.passwordHash, password).catch(() => false)) {
    await accounts.updatePasswordHash({ id: existing.id, expectedHash: existing.passwordHash, newHash: passwordHash, advanceCredentialVersion: true })
  }
}

async function main (): Promise<void> {
  const config = readConfig()
  const demo = config.accountsFile === undefined ? demoAccount(config.jwtSecret) : undefined
  const seeds: AccountSeed[] = demo === undefined ? await readAccountsFile(config.accountsFile!) : [demo]

  const stores = await createStores(config, (message, err) => {
    console.error(JSON.stringify({ level: 50, time: Date.now(), msg: message, error: (err as Error).message }))
  })
  const hashed = await Promise.all(seeds.map(async (seed) => ({ ...seed, passwordHash: seed.passwordHash ?? await hashPassword(seed.password!) })))
  await stores.seed(hashed)
  if (demo !== undefined) await resetPassword(stores.accounts, demo.email, demo.password, hashed[0]!.passwordHash)

  // Links point to APP_URL, or to the page's address, known once the server listens (PORT=0 picks a free port).
  let appUrl = config.appUrl ?? pageAddress(config.host, config.port)
  const hashing: Array<() => HashingStats> = []
  const app = await buildApp({
    onHashing: (stats) => hashing.push(stats),
    logger: passwordAuthLogger({ level: config.logLevel }),
    requestLogging: config.requestLogging,
    server: serverTimeouts(config.requestTimeout),
    healthCheck: stores.healthCheck,
    auth: {
      accounts: stores.accounts,
      sessions: stores.sessions,
      attempts: stores.attempts,
      oneTimeTokens: stores.oneTimeTokens,
      mfa: {
        issuer: config.mfaIssuer,
        ttl: config.mfaTtl,
        store: stores.mfa,
        trustDays: config.mfaTrustDays,
        ...(config.mfaTrustDays > 0 ? { trustedDevices: stores.trustedDevices } : {})
      },
      passkeys: { rpId: config.passkeyRpId, rpName: config.mfaIssuer, origins: config.passkeyOrigins, ttl: config.passkeyTtl, store: stores.passkeys },
      deliver: await createMailer({ ...config, appUrl: () => appUrl }),
      passwordReset: { ttl: config.resetTtl },
      // AUTH_VERIFY_TTL: every verification link, Register's and ChangeEmail's.
      registration: { ttl: config.verifyTtl },
      mailLimit: config.mailLimit,
      throttle: { deviceTtl: config.deviceTtl },
      jwt: {
        // The kid of each key is derived from the key, so instances configured alike name keys alike.
        keys: [config.jwtSecret, ...config.jwtPreviousSecrets].map((secret) => ({ secret })),
        expiresIn: config.tokenTtl
      },
      refresh: config.refresh
        ? { idleTimeout: config.sessionIdleTtl, maxLifetime: config.sessionMaxTtl, grace: config.refreshGrace, cookie: config.refreshCookie }
        : false,
      rateLimit: config.rateLimit ? { redis: stores.rateLimitRedis } : false,
      reauthMaxAge: config.reauthMaxAge,
      account: config.accountSelfService ? { emailChange: true, deletion: true, export: true, verifyTtl: config.verifyTtl, revertTtl: config.revertTtl } : {},
      ...(stores.activity === undefined ? {} : { admin: { activity: stores.activity } }),
      breachedPasswords: config.pwnedRangeUrl === undefined ? false : { rangeUrl: config.pwnedRangeUrl, timeoutMs: config.pwnedTimeoutMs }
    }
  })
  app.addHook('onClose', stores.close)
  const stopWatching = boundMemoryUnderFloods(hashing)
  app.addHook('onClose', async () => { stopWatching() })
  if (config.jwtSecretGenerated) {
    app.log.warn('JWT_SECRET is not set: using a random secret, so tokens die with this process and other instances reject them')
  }
  // In the background: a Redis that is not up yet must not hold the start.
  stores.warnings?.().then((warnings) => { for (const warning of warnings) app.log.warn(warning) }, () => {})
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  }

  // Fastify's own line names the socket's address; the page is opened at localhost (pageAddress).
  const listenTextResolver = (bound: string): string => `server bound to ${bound} (the page: ${pageAddress(config.host, Number(new URL(bound).port))})`
  await app.listen({ port: config.port, host: config.host, listenTextResolver }).catch((err: unknown) => { throw listenError(err, config.host, config.port) })
  // http://localhost:<port>, not the IP address it listens on: browsers refuse passkeys on an IP address.
  const address = pageAddress(config.host, (app.server.address() as AddressInfo).port)
  if (config.appUrl === undefined) appUrl = address
  if (!config.passkeyOrigins.includes(new URL(appUrl).origin)) {
    app.log.warn(`passkeys work on pages served from AUTH_PASSKEY_ORIGINS (${config.passkeyOrigins.join(', ')}) only, and the page is at ${appUrl}: set AUTH_PASSKEY_ORIGINS to its origin`)
  }
  const demoLine = demo === undefined ? '' : `\nDemo account: ${demo.email} / ${demo.password}`
  console.log(`fastify-password-auth example listening on ${address} (API docs: ${address}/docs)${demoLine}`)
}

main().catch((err: unknown) => {
  console.error(`example server failed to start: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
