import type { FastifyInstance } from 'fastify'
import { asRequestError, setupError } from '../common/errors.js'
import { assert, group } from '../common/option-rules.js'
import { BODY_LIMIT } from '../http/body-parsers.js'
import { createProblemHeaders, type ErrorHandler } from '../http/problem.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AccountReads } from '../stores/account-reads.js'
import type { SessionStore } from '../stores/types.js'
import type { AccessTokens } from '../tokens/access-tokens.js'
import { authenticate, createGuardCheck, createGuardVerify, guardStateOf, registerGuardState } from './authenticate.js'
import { createTokenCheck } from './token-check.js'

/** The plugin options guard/ reads. */
export interface GuardPluginOptions {
  /** Other names for the plugin's decorators, when the host already uses `authenticate` or `request.account`. */
  decorators?: DecoratorOptions
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
  /** `request.<name>`, the token's session `{ id, authenticatedAt, mfa }` (default 'session'). */
  session?: string
}

export type ResolvedDecorators = Required<DecoratorOptions>

const DECORATOR_OPTION_KEYS = ['authenticate', 'account', 'session'] as const

const NAME = /^[A-Za-z_$][\w$]*$/

export function resolveGuard ({ decorators }: GuardPluginOptions): ResolvedDecorators {
  const { authenticate = false, account = 'account', session = 'session' } = group(decorators, DECORATOR_OPTION_KEYS, 'decorators')
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
function checkDecoratorNames (fastify: FastifyInstance, names: ResolvedDecorators): void {
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

interface Parts {
  accessTokens: AccessTokens
  accounts: AccountReads
  sessions: SessionStore
  storeCall: StoreCall
  /** Answers a failed check as problem+json, with the registration's realm. */
  answerError: ErrorHandler
  realm: string
}

/**
 * Decorates the instance with the guard's names and leaves the token check of this registration where the
 * guard finds it (guardStateOf); refuses first a second registration and names already taken.
 */
export function installGuard (fastify: FastifyInstance, names: ResolvedDecorators, { accessTokens, accounts, sessions, storeCall, answerError, realm }: Parts): void {
  checkDecoratorNames(fastify, names)
  const checkAccessToken = createTokenCheck(accessTokens, accounts, sessions, storeCall)
  const keys = { accountKey: names.account, sessionKey: names.session }
  const problemHeaders = createProblemHeaders(realm)
  fastify.decorateRequest(names.account, null)
  fastify.decorateRequest(names.session, null)
  registerGuardState(fastify, {
    check: createGuardCheck(checkAccessToken, answerError, keys),
    verify: createGuardVerify(checkAccessToken, (error, request) => {
      const problem = asRequestError(error, request, BODY_LIMIT)
      return Object.assign(problem, { headers: problemHeaders(problem) })
    }, keys),
    ...keys,
    answerError
  })
  if (names.authenticate !== false) fastify.decorate(names.authenticate, authenticate)
}
