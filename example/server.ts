import { hashPassword, MemoryAccountStore, MemoryRevocationStore } from '../lib/index.js'
import { demoAccount, readAccountsFile, type AccountSeed } from './accounts-file.js'
import { buildApp, LOG_REDACT_PATHS } from './app.js'
import { readConfig } from './config.js'

async function main (): Promise<void> {
  const config = readConfig()
  const demo = config.accountsFile === undefined ? demoAccount() : undefined
  const seeds: AccountSeed[] = demo === undefined ? await readAccountsFile(config.accountsFile!) : [demo]

  const accounts = new MemoryAccountStore()
  for (const seed of seeds) {
    accounts.add({ ...seed, passwordHash: seed.passwordHash ?? await hashPassword(seed.password!) })
  }

  const app = await buildApp({
    logger: { level: config.logLevel, redact: LOG_REDACT_PATHS },
    auth: {
      accounts,
      revocations: new MemoryRevocationStore(),
      jwt: { secret: config.jwtSecret, expiresIn: config.tokenTtl },
      rateLimit: config.rateLimit ? undefined : false
    }
  })
  if (config.jwtSecretGenerated) {
    app.log.warn('JWT_SECRET is not set: using a random secret, so tokens die with this process and other instances reject them')
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  }

  const address = await app.listen({ port: config.port, host: config.host })
  const demoLine = demo === undefined ? '' : `\nDemo account: ${demo.email} / ${demo.password}`
  console.log(`fastify-password-auth example listening on ${address} (API docs: ${address}/docs)${demoLine}`)
}

main().catch((err: unknown) => {
  console.error(`example server failed to start: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
