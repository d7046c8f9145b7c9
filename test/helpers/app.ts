import Fastify, { type FastifyInstance, type FastifyServerOptions, type LightMyRequestResponse } from 'fastify'
import passwordAuth, {
  hashPassword, MemoryAccountStore, MemoryRevocationStore, type PasswordAuthOptions, type StoredAccount
} from '../../lib/index.js'

/** Cheap argon2 parameters: tests check behaviour, not cost. */
export const CHEAP_ARGON2 = Object.freeze({ memoryCost: 1024, timeCost: 1, parallelism: 1 })
export const SECRET = 'a-test-secret-of-at-least-32-bytes-long'
export const EMAIL = 'ada@example.com'
export const PASSWORD = 'correct horse battery staple'
export const NEW_PASSWORD = 'a brand new passphrase for ada'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface TestApp {
  app: FastifyInstance
  accounts: MemoryAccountStore
  revocations: MemoryRevocationStore
  ada: StoredAccount
  login: (email?: string, password?: string) => Promise<LightMyRequestResponse>
  /** Logs in and returns the access token (fails the caller's expectations if login fails). */
  token: (email?: string, password?: string) => Promise<string>
  changePassword: (body: Record<string, unknown>) => Promise<LightMyRequestResponse>
  logout: (token: string) => Promise<LightMyRequestResponse>
  me: (token: string) => Promise<LightMyRequestResponse>
}

export interface TestAppOptions {
  auth?: Partial<PasswordAuthOptions>
  fastify?: FastifyServerOptions
  /** Called before the plugin is registered (e.g. to register another plugin first). */
  before?: (app: FastifyInstance) => Promise<void> | void
  /** Called after the plugin is registered, to add host routes that use `app.authenticate`. */
  routes?: (app: FastifyInstance) => void
}

/**
 * A Fastify app with the plugin on memory stores, one active account (ada) and GET /me guarded by
 * `authenticate`. The per-IP limit is off unless a test turns it on. Closed in teardown.
 */
export async function buildTestApp (t: Teardown, { auth = {}, fastify = {}, before, routes }: TestAppOptions = {}): Promise<TestApp> {
  const accounts = new MemoryAccountStore()
  const revocations = new MemoryRevocationStore()
  const ada = accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const app = Fastify(fastify)
  t.teardown(async () => { await app.close() })
  await before?.(app)
  await app.register(passwordAuth, {
    accounts,
    revocations,
    jwt: { secret: SECRET },
    argon2: CHEAP_ARGON2,
    rateLimit: false,
    ...auth
  })
  app.get('/me', { onRequest: app.authenticate }, async (request) => request.account)
  routes?.(app)
  await app.ready()

  const login = async (email = EMAIL, password = PASSWORD): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email, password } })
  return {
    app,
    accounts,
    revocations,
    ada,
    login,
    token: async (email, password) => {
      const response = await login(email, password)
      if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`)
      return response.json().accessToken
    },
    changePassword: async (body) => await app.inject({ method: 'POST', url: '/Auth/ChangePassword', payload: body }),
    logout: async (token) => await app.inject({ method: 'POST', url: '/Auth/Logout', headers: { authorization: `Bearer ${token}` } }),
    me: async (token) => await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${token}` } })
  }
}

/** A ChangePassword body for ada from PASSWORD to NEW_PASSWORD, with overrides. */
export function changeBody (overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { email: EMAIL, currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD, ...overrides }
}

/** Decodes a JWT's header and payload without verifying it. */
export function decodeJwt (token: string): { header: Record<string, unknown>, payload: Record<string, unknown> } {
  const [header, payload] = token.split('.')
  return {
    header: JSON.parse(Buffer.from(header!, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(payload!, 'base64url').toString())
  }
}
