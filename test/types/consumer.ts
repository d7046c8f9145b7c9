// Compiled by test/integration/package/types.test.ts against the built package, as a consumer sees it.
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import passwordAuth, {
  authenticate, authenticated, optionalAuthenticate, requireMfa, requireRecentAuthentication, type PasswordAuthSession, authenticateResponses, fastifyPasswordAuth, hashPassword, MemoryAccountStore, MemoryMfaStore, MemorySessionStore,
  type AccountStore, type MfaStore, type AuthenticatedRequest, type AuthEvent, type BreachedPasswordsOptions, type PasswordAuthAccount, type PasswordAuthMessage, type PasswordAuthOptions, type StoredAccount,
  MemoryTrustedDeviceStore, type TrustedDeviceStore
} from 'fastify-password-auth'
import { accountsTriggerSql, PostgresAccountStore, type Queryable } from 'fastify-password-auth/postgres'

declare module 'fastify-password-auth' {
  interface PasswordAuthAccount {
    displayName: string
    plan?: 'free' | 'pro'
  }
}

const accounts = new MemoryAccountStore()
const passwordHash = await hashPassword('correct horse battery staple', { memoryCost: 19456, pepper: 'the same argon2 option as the plugin' })
accounts.add({ email: 'ada@example.com', passwordHash, displayName: 'Ada', plan: 'pro' })
// @ts-expect-error displayName is declared as required, so the store needs it
accounts.add({ email: 'bob@example.com', passwordHash })
// @ts-expect-error a field nobody declared
accounts.add({ email: 'eve@example.com', passwordHash, displayName: 'Eve', nickname: 'e' })
// @ts-expect-error findById returns the account without its hash
console.log((await accounts.findById('id'))?.passwordHash)

const pool: Queryable = { query: async () => ({ rows: [], rowCount: 0 }) }
const users = new PostgresAccountStore({
  pool,
  table: 'users',
  idType: 'bigint',
  columns: { email: 'email_address', passwordHash: 'pw' },
  activeCondition: 'deleted_at IS NULL',
  fields: { displayName: 'display_name', plan: 'plan' }
})
const viaUsers: string | undefined = (await users.findById('1'))?.displayName
console.log(viaUsers, accountsTriggerSql({ table: 'users', columns: { active: 'is_active' } }))
// @ts-expect-error a declared required field must be mapped
console.log(new PostgresAccountStore({ pool }))
// @ts-expect-error fields must name declared fields
console.log(new PostgresAccountStore({ pool, fields: { displayName: 'display_name', nickname: 'nick' } }))
// @ts-expect-error idType is one of uuid, bigint, integer, text
console.log(new PostgresAccountStore({ pool, idType: 'int', fields: { displayName: 'display_name' } }))

const customStore: AccountStore = {
  findByEmail: async (email: string): Promise<StoredAccount | null> => (email === '' ? null : null),
  findById: async (id): Promise<PasswordAuthAccount | null> =>
    id === '' ? null : { id, email: 'ada@example.com', active: true, credentialVersion: 0, displayName: 'Ada' },
  updatePasswordHash: async ({ id, expectedHash, newHash, advanceCredentialVersion }) =>
    id !== '' && expectedHash !== newHash && advanceCredentialVersion
}

const options: PasswordAuthOptions = {
  accounts,
  sessions: new MemorySessionStore(),
  jwt: { secret: 'a-consumer-secret-that-is-32-bytes-long' },
  legacyHashes: [{ name: 'php-sha1', test: (hash: string) => hash.startsWith('sha1$'), verify: async (hash: string, password: string) => hash !== password }],
  onEvent: (event: AuthEvent) => {
    if (event.type === 'login.failed') {
      const reason: 'unknown_account' | 'wrong_password' | 'inactive_account' | 'unsupported_hash' = event.reason
      console.log(reason, event.email, event.requestId)
    }
    if (event.type === 'password.breach_check_unavailable') {
      const why: 'timeout' | 'error' | 'status' | 'garbage' | 'busy' = event.reason
      console.log(why, event.password)
    }
    if (event.type === 'password.reset_required') console.log(event.route, event.reason, event.accountId)
  },
  breachedPasswords: { rangeUrl: 'https://api.pwnedpasswords.com/range/', timeoutMs: 1500, cacheTtl: 86400, cacheBytes: 33554432, onUnavailable: 'refuse' } satisfies BreachedPasswordsOptions
}

const app = Fastify()
await app.register(passwordAuth, { ...options, argon2: { pepper: 'a string pepper' }, decorators: { account: 'account' } })
await app.register(async (v2) => { await v2.register(fastifyPasswordAuth, { ...options, accounts: customStore, prefix: '/v2' }) })

// The exported guard, and the handler helper that sees the account as non-null.
app.get('/guarded', { onRequest: authenticate, preHandler: [authenticate] }, async (request) => request.account?.id)
app.get('/typed', authenticated(async (request) => {
  const email: string = request.account.email
  const name: string = request.account.displayName
  // @ts-expect-error the password hash is never on the account
  console.log(request.account.passwordHash)
  return { email, name }
}))
app.get<{ Params: { id: string } }>('/orders/:id', authenticated<{ Params: { id: string } }>({
  schema: { response: { 200: { type: 'object' }, ...authenticateResponses() } },
  config: {}
}, async function (request, reply) {
  const owner: string = request.account.id
  const id: string = request.params.id
  this.log.info({ owner, id })
  return await reply.send({ owner, id })
}))
// The generic on authenticated() alone is enough; on app.get too is fine.
app.get('/invoices/:id', authenticated<{ Params: { id: string }, Querystring: { full?: boolean } }>(async (request) => {
  const id: string = request.params.id
  const full: boolean | undefined = request.query.full
  return { id, full, owner: request.account.id }
}))
app.post('/invoices/:id', authenticated<{ Params: { id: string }, Body: { note: string } }>({ schema: {} }, async (request) => request.body.note + request.params.id))
const check = (request: AuthenticatedRequest): PasswordAuthAccount => request.account
console.log(check)
// @ts-expect-error a handler made with authenticated() takes a request, not an account
authenticated(async (account: PasswordAuthAccount) => account.id)

app.get('/me', { onRequest: authenticate }, async (request) => {
  const account = request.account
  if (account === null) throw new Error('unreachable behind authenticate')
  const id: string = account.id
  const version: number = account.credentialVersion
  const name: string = account.displayName
  const plan: 'free' | 'pro' | undefined = account.plan
  // @ts-expect-error the password hash is never on request.account
  console.log(account.passwordHash)
  return { id, version, name, plan }
})

app.get('/pre', { preHandler: [authenticate] }, async () => app.passwordAuth.stats().verifications)
app.get('/session', { onRequest: [authenticate, requireRecentAuthentication(300)] }, async (request) => {
  const since: number | undefined = request.session?.authenticatedAt
  const session: PasswordAuthSession | null = request.session
  return { since, id: session?.id }
})
app.get('/feed', { onRequest: optionalAuthenticate }, async (request) => request.account?.email ?? 'anonymous')
app.post('/email', authenticated({ maxAuthAge: 60, schema: {} }, async (request) => request.account.id))
app.post('/invite', async (request, reply) => {
  const tokens = await app.passwordAuth.sessions.start('account-id', { request, reply })
  return tokens?.accessToken ?? null
})

// No fastify.authenticate unless the host asks for it (decorators.authenticate, merged in
// PasswordAuthDecoratorNames): the form that failed open without `await` does not compile.
// @ts-expect-error fastify.authenticate is not there by default
app.get('/unguarded', { onRequest: app.authenticate }, async () => 'never')

// @ts-expect-error jwt is required
await app.register(passwordAuth, { accounts })

// Sign-up and password reset: the messages are typed, their token optional.
const deliver = async (message: PasswordAuthMessage): Promise<void> => {
  const kind: 'password_reset' | 'password_changed' | 'verify_email' | 'account_exists' | 'mfa_enabled' | 'mfa_disabled' | 'mfa_code_failed' |
    'email_change' | 'email_change_requested' | 'email_changed' | 'account_deleted' | 'passkey_removed' | 'passkey_added' | 'new_device_login' = message.type
  const link: string | undefined = message.token === undefined ? undefined : `https://app.example.com/#token=${message.token}`
  // new_device_login: when, from where, on what.
  const device: string | undefined = message.type === 'new_device_login' ? `${message.device ?? ''} ${message.ip ?? ''} ${message.at?.toFixed() ?? ''}` : undefined
  console.log(kind, message.to, link, message.expiresAt?.toFixed(), device)
}
await app.register(async (signUp) => {
  await signUp.register(passwordAuth, {
    ...options, deliver, passwordReset: { ttl: 900 }, registration: { ttl: 3600, fields: { displayName: Type.String({ maxLength: 80 }) } }, mailLimit: 3
  })
}, { prefix: '/signup' })
// Two factors, with a store of the host's choosing; a route that demands them.
await app.register(async (twoFactor) => {
  const mfaStore: MfaStore = new MemoryMfaStore()
  await twoFactor.register(passwordAuth, { ...options, mfa: { issuer: 'Example', ttl: 120, store: mfaStore } })
  twoFactor.get('/payouts', authenticated({ requireMfa: true, maxAuthAge: 300 }, async (request) => request.account.id))
  twoFactor.get('/payouts-hook', { onRequest: [authenticate, requireMfa] }, async () => 'ok')
}, { prefix: '/two-factor' })
// The contract's flat names still type-check (marked @deprecated): mfaTtl is mfa.ttl.
await app.register(passwordAuth, { ...options, mfa: true, mfaTtl: 120, deliver, passwordReset: true, resetTtl: 900, registration: true, verifyTtl: 3600 })
// @ts-expect-error mfa takes true, false or { issuer }
await app.register(passwordAuth, { ...options, mfa: 'on' })

// @ts-expect-error deliver takes a function
await app.register(passwordAuth, { ...options, deliver: 'smtp://localhost' })

// @ts-expect-error the plugin's own @fastify/jwt stays private: no `jwt` decorator reaches the host's types
console.log(app.jwt)

// The contract suite is importable from the testing entry point.
const { sessionStoreContract } = await import('fastify-password-auth/testing')
for (const check of sessionStoreContract({ create: async () => new MemorySessionStore() })) {
  const name: string = check.name
  await check.run().then(() => name)
}

// Account self-service and the admin API are typed: a misspelt account option or a missing admin fails to compile.
await app.register(passwordAuth, { accounts, jwt: { secret: 'x'.repeat(32) }, deliver, account: { emailChange: true, deletion: true, beforeDelete: async () => ({ refuse: 'no' }) } })
// @ts-expect-error emailChange is a boolean
await app.register(passwordAuth, { accounts, jwt: { secret: 'x'.repeat(32) }, account: { emailChange: 'yes' } })
const records: Array<{ type: string, time: number }> = await app.passwordAuth.admin.activity('id')
const reset: boolean = await app.passwordAuth.admin.requirePasswordReset('id', { admin: 'support' })
// @ts-expect-error the acting admin is required
await app.passwordAuth.admin.unblock('ada@example.com')
console.log(records, reset)
// Trusted devices (contract §21): the option, the stores, their contract.
const trustStore: TrustedDeviceStore = new MemoryTrustedDeviceStore()
await app.register(async (trusting) => {
  await trusting.register(passwordAuth, { accounts, jwt: { secret: 'x'.repeat(32) }, sessionRoutes: true, mfa: { issuer: 'App', trustDays: 30, trustedDevices: trustStore } })
})
// @ts-expect-error trustDays is a number of days
await app.register(passwordAuth, { accounts, jwt: { secret: 'x'.repeat(32) }, mfa: { trustDays: '30' } })
const { trustedDeviceStoreContract } = await import('fastify-password-auth/testing')
const trustChecks: Array<{ name: string, run: () => Promise<void> }> = trustedDeviceStoreContract({ create: async () => trustStore })
console.log(trustChecks.length)
// MySQL / MariaDB: a mysql2/promise pool is what the stores take (checked with skipLibCheck off); schemaSql prints the DDL.
const { MysqlAccountStore, MysqlSessionStore } = await import('fastify-password-auth/mysql')
const mysqlPool = (await import('mysql2/promise')).default.createPool({ uri: 'mysql://app@127.0.0.1:3306/app' })
const mysqlAccounts: AccountStore = new MysqlAccountStore({
  pool: mysqlPool, table: 'users', idType: 'bigint', columns: { passwordHash: 'encrypted_password' }, fields: { displayName: 'name', plan: 'plan' }
})
await app.register(passwordAuth, { accounts: mysqlAccounts, sessions: new MysqlSessionStore({ pool: mysqlPool }), jwt: { secret: 'x'.repeat(32) } })
// @ts-expect-error a declared required field must be mapped, here too
console.log(new MysqlAccountStore({ pool: mysqlPool }))
const { schemaSql } = await import('fastify-password-auth/schema')
const ddl: string = schemaSql('mysql', { accountsTable: 'users' })
// @ts-expect-error the dialects are postgres, mysql and sqlite
console.log(ddl, schemaSql('mssql'))
