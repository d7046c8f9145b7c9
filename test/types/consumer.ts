// Compiled by test/types.test.ts against the built package, as a consumer sees it.
import Fastify from 'fastify'
import passwordAuth, {
  fastifyPasswordAuth, hashPassword, MemoryAccountStore, MemoryRevocationStore,
  type AccountStore, type AuthEvent, type PasswordAuthOptions, type StoredAccount
} from 'fastify-password-auth'

declare module 'fastify-password-auth' {
  interface PasswordAuthAccount {
    displayName?: string
  }
}

const accounts = new MemoryAccountStore()
accounts.add({ email: 'ada@example.com', passwordHash: await hashPassword('correct horse battery staple') })

const customStore: AccountStore = {
  findByEmail: async (email: string): Promise<StoredAccount | null> => (email === '' ? null : null),
  findById: async () => null,
  updatePasswordHash: async ({ id, expectedHash, newHash, advanceCredentialVersion }) =>
    id !== '' && expectedHash !== newHash && advanceCredentialVersion
}

const options: PasswordAuthOptions = {
  accounts,
  revocations: new MemoryRevocationStore(),
  jwt: { secret: 'a-consumer-secret-that-is-32-bytes-long' },
  onEvent: (event: AuthEvent) => {
    if (event.type === 'login.failed') {
      const reason: 'unknown_account' | 'wrong_password' | 'inactive_account' = event.reason
      console.log(reason, event.email, event.requestId)
    }
  }
}

const app = Fastify()
await app.register(passwordAuth, options)
await app.register(fastifyPasswordAuth, { ...options, accounts: customStore, prefix: '/v2' })

app.get('/me', { onRequest: app.authenticate }, async (request) => {
  const account = request.account
  if (account === null) throw new Error('unreachable behind authenticate')
  const id: string = account.id
  const version: number = account.credentialVersion
  const name: string | undefined = account.displayName
  // @ts-expect-error the password hash is never on request.account
  console.log(account.passwordHash)
  return { id, version, name }
})

app.get('/pre', { preHandler: [app.authenticate] }, async () => app.passwordAuth.stats().verifications)

// @ts-expect-error jwt is required
await app.register(passwordAuth, { accounts, revocations: new MemoryRevocationStore() })

// @ts-expect-error the plugin's own @fastify/jwt stays private: no `jwt` decorator reaches the host's types
console.log(app.jwt)

// The contract suite is importable from the testing entry point.
const { revocationStoreContract } = await import('fastify-password-auth/testing')
for (const check of revocationStoreContract({ create: async () => new MemoryRevocationStore() })) {
  const name: string = check.name
  await check.run().then(() => name)
}
