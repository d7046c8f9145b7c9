import type { Authenticate } from './authenticate.js'
import type { PasswordAuthAccount } from '../stores/types.js'
import type { PasswordAuthSession } from './token-check.js'

/**
 * The decorator names the types use. Renamed decorators (the `decorators` option) are typed by merging
 * the same names in here, e.g. for `decorators: { authenticate: 'authenticate', account: 'member' }`:
 *
 * ```ts
 * declare module 'fastify-password-auth' {
 *   interface PasswordAuthDecoratorNames { authenticate: 'authenticate', account: 'member' }
 * }
 * ```
 */
export interface PasswordAuthDecoratorNames {}

type NameOf<Key extends string, Default extends string> =
  PasswordAuthDecoratorNames extends { [K in Key]: infer Name } ? Name extends string ? Name : never : Default

/** `request.<name>` of the account: 'account' unless renamed. */
export type AccountDecoratorName = NameOf<'account', 'account'>
/** `request.<name>` of the session: 'session' unless renamed (beside @fastify/session, for one). */
export type SessionDecoratorName = NameOf<'session', 'session'>
/** `fastify.<name>` of the guard: none unless the host asks for one (then merged in PasswordAuthDecoratorNames). */
export type AuthenticateDecoratorName = NameOf<'authenticate', never>

/**
 * What the plugin adds to every request. FastifyRequest extends it (rather than declaring the property
 * itself), so a host's own declaration of the same name wins where the types agree.
 */
export type PasswordAuthRequestDecorators = {
  /** The authenticated account (without its password hash) once the guard has passed; else null. */
  [Name in AccountDecoratorName]: PasswordAuthAccount | null
} & {
  /** The token's session and when its account last proved its password, once the guard has passed; else null. */
  [Name in SessionDecoratorName]: PasswordAuthSession | null
}

/** The guard on the instance, under its name (none when `decorators.authenticate` is false). */
export type PasswordAuthInstanceDecorators = {
  /** The guard, as `fastify.authenticate`: prefer `import { authenticate }`, which exists before registration. */
  [Name in AuthenticateDecoratorName]: Authenticate
}
