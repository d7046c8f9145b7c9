import { Kind } from '@sinclair/typebox'
import { assert, checkPath, group, isInteger, isObject } from '../common/option-rules.js'

/** The plugin options routes/ reads: where the routes live and which optional ones are on. */
export interface RoutesPluginOptions {
  /** Route prefix, default '/Auth'. */
  prefix?: string
  /**
   * The routes that let users see and end their own sessions and prove their password again:
   * POST /Reauthenticate, GET /Sessions, DELETE /Sessions/:id, POST /Sessions/EndOthers. Default false.
   */
  sessionRoutes?: boolean
  /**
   * POST /ForgotPassword and POST /ResetPassword (default false); needs `deliver`. `ttl`: seconds a reset token lives
   * (default 1800). A reset removes the account's passkeys unless `keepPasskeys: true` (contract §18).
   */
  passwordReset?: boolean | { ttl?: number, keepPasskeys?: boolean }
  /**
   * POST /Register and POST /VerifyEmail (default false); needs `deliver` and an account store with
   * create(). `ttl`: seconds a verification link lives (default 86400). `fields` adds fields of yours to Register's
   * body: TypeBox schemas (`Type.String(…)` from @sinclair/typebox), each required, validated like the built-in
   * ones, and handed to the store's create().
   */
  registration?: boolean | { ttl?: number, fields?: Record<string, object> }
}

export const PASSWORD_RESET_KEYS = ['ttl', 'keepPasskeys']
export const REGISTRATION_KEYS = ['ttl', 'fields']

type RegistrationOptions = Exclude<NonNullable<RoutesPluginOptions['registration']>, boolean>

/** ForgotPassword and ResetPassword, when on: a reset token's lifetime. */
export interface PasswordResetRoutes { ttlMs: number, keepPasskeys: boolean }

/** Register and VerifyEmail, when on: a verification token's lifetime and the host's own fields. */
export interface RegistrationRoutes { ttlMs: number, fields: Record<string, object> }

export interface ResolvedRoutes {
  prefix: string
  sessionRoutes: boolean
  passwordReset: PasswordResetRoutes | undefined
  registration: RegistrationRoutes | undefined
}

/**
 * `canDeliver`: whether `deliver` is there to send the links of a reset or a registration; `canCreateAccounts`:
 * whether the account store has create().
 */
export function resolveRoutes (options: RoutesPluginOptions, { canDeliver, canCreateAccounts }: { canDeliver: boolean, canCreateAccounts: boolean }): ResolvedRoutes {
  const { prefix = '/Auth', sessionRoutes = false, passwordReset = false } = options
  checkPath(prefix, 'prefix', true)
  assert(typeof sessionRoutes === 'boolean', 'sessionRoutes must be true or false')
  assert(typeof passwordReset === 'boolean' || isObject(passwordReset), 'passwordReset must be true, false or { ttl, keepPasskeys }')
  const { ttl = 1800, keepPasskeys = false } = typeof passwordReset === 'boolean' ? {} : group(passwordReset, PASSWORD_RESET_KEYS, 'passwordReset')
  assert(typeof keepPasskeys === 'boolean', 'passwordReset.keepPasskeys must be true or false')
  assert(passwordReset === false || canDeliver, 'passwordReset needs deliver: the plugin has no other way to send the reset link')
  assert(isInteger(ttl, 1, 86_400), 'passwordReset.ttl must be a whole number of seconds from 1 to 86400')
  return {
    prefix,
    sessionRoutes,
    passwordReset: passwordReset === false ? undefined : { ttlMs: ttl * 1000, keepPasskeys },
    registration: resolveRegistration(options.registration, canDeliver, canCreateAccounts)
  }
}

/** Names Register's body and the account already use: the host's fields take others. */
const TAKEN_FIELD_NAMES = new Set(['email', 'password', 'confirmPassword', 'id', 'active', 'credentialVersion', 'passwordHash', '__proto__', 'constructor'])

function resolveRegistration (registration: unknown = false, canDeliver: boolean, canCreateAccounts: boolean): RegistrationRoutes | undefined {
  assert(typeof registration === 'boolean' || isObject(registration), 'registration must be true, false or { ttl, fields }')
  if (registration === false) return undefined
  const { ttl = 86_400, fields = {} } = registration === true ? {} : group(registration as RegistrationOptions, REGISTRATION_KEYS, 'registration')
  assert(isInteger(ttl, 1, 30 * 86_400), 'registration.ttl must be a whole number of seconds from 1 to 2592000 (30 days)')
  assert(canDeliver, 'registration needs deliver: the plugin has no other way to send the verification link')
  assert(canCreateAccounts, 'registration needs an account store with create() (MemoryAccountStore and PostgresAccountStore have it)')
  assert(isObject(fields), 'registration.fields must be an object of TypeBox schemas')
  for (const [name, schema] of Object.entries(fields)) {
    assert(/^[A-Za-z_][\w]{0,63}$/.test(name) && !TAKEN_FIELD_NAMES.has(name), `registration.fields.${name}: the name is taken or not a plain identifier`)
    // The plugin's validator compiles TypeBox schemas: a plain JSON Schema would fail only at ready().
    assert(isObject(schema) && Kind in schema, `registration.fields.${name} must be a TypeBox schema, e.g. Type.String({ maxLength: 80 }) from @sinclair/typebox`)
  }
  return { ttlMs: ttl * 1000, fields: fields as Record<string, object> }
}
