import type { Authenticate } from './authenticate.js'
import type { PasswordAuthAccount } from './stores/types.js'

/**
 * The decorator names the types use. Renamed decorators (the `decorators` option) are typed by merging
 * the same names in here, e.g. for `decorators: { authenticate: false, account: 'member' }`:
 *
 * ```ts
 * declare module 'fastify-password-auth' {
 *   interface PasswordAuthDecoratorNames { authenticate: false, account: 'member' }
 * }
 * ```
 */
export interface PasswordAuthDecoratorNames {}

type NameOf<Key extends string, Default extends string> =
  PasswordAuthDecoratorNames extends { [K in Key]: infer Name } ? Name extends string ? Name : never : Default

/** `request.<name>` of the account: 'account' unless renamed. */
export type AccountDecoratorName = NameOf<'account', 'account'>
/** `fastify.<name>` of the guard: 'authenticate' unless renamed; never when turned off. */
export type AuthenticateDecoratorName = NameOf<'authenticate', 'authenticate'>

/**
 * What the plugin adds to every request. FastifyRequest extends it (rather than declaring the property
 * itself), so a host's own declaration of the same name wins where the types agree.
 */
export type PasswordAuthRequestDecorators = {
  /** The authenticated account (without its password hash) once the guard has passed; else null. */
  [Name in AccountDecoratorName]: PasswordAuthAccount | null
}

/** The guard on the instance, under its name (none when `decorators.authenticate` is false). */
export type PasswordAuthInstanceDecorators = {
  /** The guard, as `fastify.authenticate`: prefer `import { authenticate }`, which exists before registration. */
  [Name in AuthenticateDecoratorName]: Authenticate
}
