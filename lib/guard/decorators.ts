import type { Authenticate } from './authenticate.js'
import type { PasswordAuthAccount } from '../stores/types.js'
import type { PasswordAuthSession } from './token-check.js'
import type { FastifyInstance } from 'fastify'
import { setupError } from '../common/errors.js'
import { guardStateOf } from './authenticate.js'
import { assert } from '../common/option-rules.js'

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

/** The names the plugin decorates with, for hosts whose own plugins use the defaults. */
export interface DecoratorOptions {
  /**
   * `fastify.<name>`, the guard as an instance decorator. Default false: none, import `authenticate`,
   * which exists before registration, so a route declared before an un-awaited registration still fails
   * closed (`app.authenticate` would be undefined there, and `onRequest: undefined` runs no guard at all).
   */
  authenticate?: string | false
  /** `request.<name>`, the authenticated account (default 'account'). */
  account?: string
  /** `request.<name>`, the token's session `{ id, authenticatedAt }` (default 'session'). */
  session?: string
}

export type ResolvedDecorators = Required<DecoratorOptions>

export const DECORATOR_OPTION_KEYS = ['authenticate', 'account', 'session'] as const

const NAME = /^[A-Za-z_$][\w$]*$/

export function resolveDecorators ({ authenticate = false, account = 'account', session = 'session' }: DecoratorOptions): ResolvedDecorators {
  assert(authenticate === false || (typeof authenticate === 'string' && NAME.test(authenticate)),
    'decorators.authenticate must be false or a name of letters, digits, _ and $, not starting with a digit')
  assert(typeof account === 'string' && NAME.test(account), 'decorators.account must be a name of letters, digits, _ and $, not starting with a digit')
  assert(typeof session === 'string' && NAME.test(session) && session !== account, 'decorators.session must be a name of letters, digits, _ and $, not starting with a digit, other than decorators.account')
  return { authenticate, account, session }
}

/**
 * Refuses, before anything is decorated, a second registration in this context (or under one) and names
 * the host already uses: Fastify's own "already added" error would not say which option fixes it.
 */
export function checkDecoratorNames (fastify: FastifyInstance, names: ResolvedDecorators): void {
  if (guardStateOf(fastify) !== undefined) throw setupError('FST_PWAUTH_ALREADY_REGISTERED', fastify.prefix)
  if (names.authenticate !== false && fastify.hasDecorator(names.authenticate)) {
    throw setupError('FST_PWAUTH_NAME_TAKEN', `fastify.${names.authenticate}`, 'by your app or another plugin, such as a @fastify/jwt guard',
      'Keep yours: pass decorators: { authenticate: \'passwordAuthenticate\' } (or false) and guard routes with ' +
      'import { authenticate } from \'fastify-password-auth\'')
  }
  if (fastify.hasRequestDecorator(names.account)) {
    throw setupError('FST_PWAUTH_NAME_TAKEN', `request.${names.account}`, 'by your app or another plugin',
      'Keep yours: pass decorators: { account: \'passwordAuthAccount\' } and read the account from there')
  }
  if (fastify.hasRequestDecorator(names.session)) {
    throw setupError('FST_PWAUTH_NAME_TAKEN', `request.${names.session}`, 'by your app or another plugin, such as @fastify/session',
      'Keep yours: pass decorators: { session: \'passwordAuthSession\' } and read the session from there')
  }
  if (fastify.hasDecorator('passwordAuth')) {
    throw setupError('FST_PWAUTH_NAME_TAKEN', 'fastify.passwordAuth', 'by your app or another plugin',
      'The plugin\'s host API needs that name: rename yours')
  }
}
