import Fastify, { type FastifyInstance, type FastifyServerOptions, type LightMyRequestResponse } from 'fastify'
import passwordAuth, {
  authenticate, hashPassword, MemoryAccountStore, MemorySessionStore, type PasswordAuthOptions, type StoredAccount
} from '../../lib/index.js'
import type { Teardown } from './teardown.js'

/** Cheap argon2 parameters: tests check behaviour, not cost. */
export const CHEAP_ARGON2 = Object.freeze({ memoryCost: 1024, timeCost: 1, parallelism: 1 })
export const SECRET = 'a-test-secret-of-at-least-32-bytes-long'
export const EMAIL = 'ada@example.com'
/**
 * Fastify's 10 s for a plugin to start is too short on a CI machine with 4 test files, Chromium and Redis Clusters
 * sharing 2 cores: the plugin's first hashing thread has been seen to take that long to start there.
 */
export const PLUGIN_TIMEOUT_MS = 60_000
export const PASSWORD = 'correct horse battery staple'

/** Registers the plugin with `options` on a new app and closes it: the registration's error, or undefined if it started. */
export async function registrationError (options: PasswordAuthOptions): Promise<Error & { code?: string } | undefined> {
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  try {
    await app.register(passwordAuth, options)
    await app.ready()
    return undefined
  } catch (err) {
    return err as Error
  } finally {
    await app.close()
  }
}
export const NEW_PASSWORD = 'a brand new passphrase for ada'

/** A clock the test moves by hand; the memory session store reads it. */
export interface TestClock {
  now: () => number
  advance: (ms: number) => void
}

export function testClock (start = Date.now()): TestClock {
  let offset = start - Date.now()
  return { now: () => Date.now() + offset, advance: (ms) => { offset += ms } }
}

export interface LoginTokens {
  accessToken: string
  refreshToken: string
  expiresIn: number
  refreshExpiresIn: number
}

export interface TestApp {
  app: FastifyInstance
  accounts: MemoryAccountStore
  sessions: MemorySessionStore
  /** The session store's clock. */
  clock: TestClock
  ada: StoredAccount
  login: (email?: string, password?: string) => Promise<LightMyRequestResponse>
  /** Logs in and returns the access token (fails the caller's expectations if login fails). */
  token: (email?: string, password?: string) => Promise<string>
  /** Logs in and returns the whole body. */
  tokens: (email?: string, password?: string) => Promise<LoginTokens>
  refresh: (refreshToken: unknown) => Promise<LightMyRequestResponse>
  changePassword: (body: Record<string, unknown>) => Promise<LightMyRequestResponse>
  logout: (token: string) => Promise<LightMyRequestResponse>
  me: (token: string) => Promise<LightMyRequestResponse>
}

export interface TestAppOptions {
  auth?: Partial<PasswordAuthOptions>
  fastify?: FastifyServerOptions
  /** Called before the plugin is registered (e.g. to register another plugin first). */
  before?: (app: FastifyInstance) => Promise<void> | void
  /** Called after the plugin is registered, to add host routes. */
  routes?: (app: FastifyInstance) => void
}

/**
 * A Fastify app with the plugin on memory stores, one active account (ada) and GET /me guarded by
 * `authenticate`. The per-IP limit is off unless a test turns it on. Closed in teardown.
 */
export async function buildTestApp (t: Teardown, { auth = {}, fastify = {}, before, routes }: TestAppOptions = {}): Promise<TestApp> {
  const accounts = new MemoryAccountStore()
  const clock = testClock()
  const sessions = new MemorySessionStore({ now: clock.now })
  const ada = accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS, ...fastify })
  t.teardown(async () => { await app.close() })
  await before?.(app)
  await app.register(passwordAuth, {
    accounts,
    sessions,
    jwt: { secret: SECRET },
    argon2: CHEAP_ARGON2,
    rateLimit: false,
    ...auth
  })
  app.get('/me', { onRequest: authenticate }, async (request) => request.account)
  routes?.(app)
  await app.ready()

  const login = async (email = EMAIL, password = PASSWORD): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email, password } })
  const tokens = async (email?: string, password?: string): Promise<LoginTokens> => {
    const response = await login(email, password)
    if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`)
    return response.json()
  }
  return {
    app,
    accounts,
    sessions,
    clock,
    ada,
    login,
    token: async (email, password) => (await tokens(email, password)).accessToken,
    tokens,
    refresh: async (refreshToken) => await app.inject({ method: 'POST', url: '/Auth/Refresh', payload: { refreshToken } }),
    changePassword: async (body) => await app.inject({ method: 'POST', url: '/Auth/ChangePassword', payload: body }),
    logout: async (token) => await app.inject({ method: 'POST', url: '/Auth/Logout', headers: { authorization: `Bearer ${token}` } }),
    me: async (token) => await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${token}` } })
  }
}

/** Plugin options for an app a test builds itself: memory stores with ada, cheap argon2, no per-IP limit. */
export async function authOptions (): Promise<PasswordAuthOptions> {
  const accounts = new MemoryAccountStore()
  accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, CHEAP_ARGON2) })
  return { accounts, jwt: { secret: SECRET }, argon2: CHEAP_ARGON2, rateLimit: false }
}

/** Logs ada in on `app` (routes under `prefix`) and returns her access token. */
export async function accessToken (app: FastifyInstance, prefix = '/Auth'): Promise<string> {
  const response = await app.inject({ method: 'POST', url: `${prefix}/Login`, payload: { email: EMAIL, password: PASSWORD } })
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`)
  return response.json().accessToken
}

/** A Fastify app, closed in teardown, whose error-level log messages the test can read. */
export function appWithErrorLog (t: Teardown): { app: FastifyInstance, errors: () => string[] } {
  const messages: string[] = []
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS, logger: { level: 'error', stream: { write: (line: string) => { messages.push(JSON.parse(line).msg) } } } })
  t.teardown(async () => { await app.close() })
  return { app, errors: () => messages }
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
