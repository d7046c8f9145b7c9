import Fastify from 'fastify'
import passwordAuth from '../lib/index.js'
import { readConfig } from './config.js'
import { createStores } from './stores/index.js'

/**
 * `npm run reseal`: re-seals under JWT_SECRET every TOTP secret a key of JWT_PREVIOUS_SECRETS sealed (contract
 * §5), so that key can then be removed without locking a two-factor user out. Same environment as the server.
 */
async function main (): Promise<void> {
  const config = readConfig()
  if (config.jwtSecretGenerated) throw new Error('JWT_SECRET is not set: there is no key to re-seal under')
  if (config.databaseUrl === undefined) throw new Error('DATABASE_URL is not set: second factors live in the server\'s memory, there is nothing to re-seal')
  const stores = await createStores(config, (message, err) => { console.error(`${message}: ${(err as Error).message}`) })
  const app = Fastify()
  app.addHook('onClose', stores.close)
  try {
    await app.register(passwordAuth, {
      accounts: stores.accounts,
      mfa: { store: stores.mfa },
      rateLimit: false,
      jwt: { keys: [config.jwtSecret, ...config.jwtPreviousSecrets].map((secret) => ({ secret })) }
    })
    const { resealed, unreadable } = await app.passwordAuth.reseal()
    console.log(`re-sealed ${resealed} second-factor secret(s) under JWT_SECRET` +
      (unreadable === 0 ? '' : `; ${unreadable} open under no configured key (those accounts must set two factors up again)`))
  } finally {
    await app.close()
  }
}

main().catch((err: unknown) => {
  console.error(`reseal failed: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
