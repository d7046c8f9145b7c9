/*
 * Code map. plugin.ts (this file) wires the parts; index.ts is the public API; options.ts checks the options.
 *
 * lib/ is a ladder: each room imports only from the floors below its own, never from its floor or above
 * (LADDER in .ci/eslint.config.js, which the lint enforces). Top floor first, roughly as a request goes down:
 *
 *   index.ts     the public API: the fp wrapper, the exports, the type augmentation
 *   plugin.ts    wires the rooms' parts together at registration
 *   options.ts   the plugin's options: the shared ones, then each room's door
 *   routes/      the handlers, one folder per journey: sign-in/ (Login, LoginMfa, LoginMfa/Options, LoginPasskey,
 *                Passkeys/LoginOptions, and finish-sign-in.ts, the end every sign-in shares: a new method is a file
 *                there that checks its proof and hands it to finishSignIn), sign-up/ (Register,
 *                VerifyEmail), recovery/ (ForgotPassword, ResetPassword), account/ (ChangeEmail, VerifyEmailChange,
 *                RevertEmailChange, DeleteAccount, Account/Export), security/ (ChangePassword, Reauthenticate, Mfa/*,
 *                Passkeys/*, Sessions/Devices), sessions/ (Logout, Refresh, Sessions); beside them their shared
 *                context, the Fastify contexts they are registered in (index.ts: the per-IP limit once, around the
 *                routes it counts), JWKS, and the answers of refused
 *                checks (refusals.ts: refuseResetRequired too). They call no store: accounts through account/, the
 *                rest through the services of the rooms below
 *   account/     the account service (service.ts): the routes' and the admin API's door to the account store, and
 *                its only writer; the account's rules: a one-time token's account still stands (ofToken, by
 *                session/account-rule.ts, the rule the guard and Refresh also apply), the hash compare-and-set and
 *                its one retry rule, what ends after a new password (new-password.ts), forgetting the account
 *                everywhere (forget-account.ts), fastify.passwordAuth.admin on them (admin.ts), the activity kept for
 *                it, self-service's options
 *   guard/ password/ mfa/ messages/ passkeys/
 *     guard/     `authenticate` and `authenticated()` for host routes, the token check, the decorators
 *     password/  argon2id hashing on threads of its own and its queue, the policy, the breached-password
 *                range check (k-anonymity, breach-options.ts), the credential check, legacy/ hash formats
 *     mfa/       second factors: TOTP (otplib), sealed secrets, hashed recovery codes, the code counters, trusted devices
 *     messages/  what the host's `deliver` is handed, after the answer, the per-address mail limit, the new-device notice
 *     passkeys/  WebAuthn through @simplewebauthn/server (loaded only when on): challenges, verification, signature counters
 *   throttle/ session/
 *     throttle/  attempt counting per e-mail and per known device, device tokens, the per-IP limit's options; the
 *                bracket every counter runs in (counted.ts) and the table of every counter's key (counter-keys.ts)
 *     session/   sessions: start, refresh with rotating refresh tokens, end; the token body; the account rule
 *                (account-rule.ts: does a token's account still stand, defined once here, below the guard that
 *                checks it on every request); the host's session API; cookie mode's cookies
 *   tokens/ http/
 *     tokens/    signing keys and the key ring (every key derived from them, with its rotation), access
 *                tokens (JWT, through @fastify/jwt in a context of its own), one-time tokens (reset and
 *                verification links, login challenges) and their purposes, each with its slot rule (purposes.ts)
 *     http/      HTTP plumbing: body parsers, schemas and validation, problem+json, OpenAPI, the secure
 *                cookie (cookie mode's refresh and device cookies), log redaction, host server settings, User-Agent labels, the tick-object pin (tick-shape.ts)
 *   stores/      the store interfaces (types.ts), memory/, redis/, the SQL dialects postgres/, mysql/, sqlite/ (a folder
 *                each, one file per contract: its statements and driver calls) over sql/, what they share (the
 *                account mapping, session rows, the list of tables, pruning), schema/ (every dialect's DDL), the
 *                store-call deadline and the memory stores' calls that skip it (at-once.ts), the one door every
 *                room reads accounts through (account-reads.ts; the lint keeps the store there and in account/),
 *                the attempt arithmetic every attempt store follows
 *                (attempt-rules.ts, mirrored in SQL and Lua), and testing/, the contract suites every store passes
 *                (`fastify-password-auth/testing`)
 *   common/      the ground floor: every error (errors.ts), every event (events.ts), the shared option rules
 *
 * Each room with options has a door, <room>/options.ts: the options it reads, with their docs; resolve…()
 * checks them and fills in the defaults (options.ts visits each once); create…() builds the room's parts
 * (plugin.ts calls each once).
 *
 * A Login request: http/ (body parser, validation) → routes/sign-in/login.ts → throttle/ and password/
 * (credential check) → session/ (start) → tokens/ (access token) → http/ (answer or problem+json).
 * A guarded host request: guard/authenticate.ts → guard/token-check.ts (tokens/, stores/) → your handler.
 */
import type { FastifyInstance } from 'fastify'
import { keepActivity } from './account/activity.js'
import { createAdmin, type AdminApi } from './account/admin.js'
import type { AccountParts } from './account/parts.js'
import { AccountService } from './account/service.js'
import { createEventEmitter } from './common/events.js'
import { installGuard } from './guard/options.js'
import { warnAboutHostSettings } from './http/host-settings.js'
import { pinTickObjectShape } from './http/tick-shape.js'
import { createErrorHandler, createProblemSender } from './http/problem.js'
import { createMessages } from './messages/options.js'
import { createResetLinks } from './messages/reset-links.js'
import { createMfa } from './mfa/options.js'
import { resolveOptions, type PasswordAuthOptions } from './options.js'
import { createPasskeys } from './passkeys/options.js'
import type { HashingStats } from './password/hasher.js'
import { createPassword } from './password/options.js'
import { registerRoutes } from './routes/index.js'
import { createSessionApi, type SessionApi } from './session/host-api.js'
import { createSessions } from './session/options.js'
import { AccountReads } from './stores/account-reads.js'
import { createStoreCall } from './stores/store-call.js'
import { createThrottle } from './throttle/options.js'
import { createTokens } from './tokens/options.js'

/** The host API on `fastify.passwordAuth`. */
export interface PasswordAuthDecorator {
  /** argon2 work done so far, for metrics and capacity planning. */
  stats (): HashingStats
  /** Sessions: start one for an account you authenticated, list, end one or all. */
  sessions: SessionApi
  /** What support staff may do to an account (contract §22): never set or see a password. */
  admin: AdminApi
  /**
   * Re-seals under the first key every TOTP secret an older key sealed (contract §5): run it after a rotation,
   * before removing the old key. `unreadable`: secrets no configured key opens. Nothing to do without `mfa`.
   */
  reseal (): Promise<{ resealed: number, unreadable: number }>
}

/** Checks the options, then has each room build its parts from its own, and hands each part to the rooms that use it. */
export async function passwordAuth (fastify: FastifyInstance, options: PasswordAuthOptions): Promise<void> {
  const config = resolveOptions(options)
  const { realm } = config
  const { log } = fastify
  const storeCall = createStoreCall(config.storeTimeout)
  // The one door every room reads the account store through; only the account service (below) writes it.
  const accounts = new AccountReads(config.accounts, storeCall)
  // Every event naming an account is kept for admin.activity(), then handed to the host's onEvent.
  const { onEvent, activity } = keepActivity(config.account.activity, config.onEvent, log)
  const emit = createEventEmitter(onEvent, log)
  const answerError = createErrorHandler(createProblemSender(realm))
  const { keyRing, accessTokens, oneTimeTokens } = await createTokens(fastify, config.tokens, storeCall)
  installGuard(fastify, config.decorators, { accessTokens, accounts, sessions: config.sessions.store, storeCall, answerError, realm })
  warnAboutHostSettings(fastify)
  pinTickObjectShape()

  // Cookies go to the full prefix: the host's, if it registered the plugin under one, and ours.
  const { sessionService, cookies } = createSessions(config.sessions, {
    accounts, accessTokens, keyRing, storeCall, emit, log, fullPrefix: fastify.prefix + config.routes.prefix
  })
  const { attempts, attemptThrottle, knownDevices, tokenGuesses } = createThrottle(config.throttle, {
    leaseMs: config.password.leaseMs, keyRing, storeCall, deviceCookie: cookies?.device, accounts
  })
  const password = await createPassword(config.password, { accounts, throttle: attemptThrottle, emit, log })
  // The hashing threads started with it (the dummy hash ran on the first); they end with Fastify.
  fastify.addHook('onClose', async () => { await password.hasher.close() })
  const { outbox, mailLimit, noticeNewDevice } = createMessages(config.messages, { emit, log, attempts, keyRing, storeCall })
  const mfa = createMfa(config.mfa, { attempts, tokenGuesses, keyRing, storeCall, blocks: attemptThrottle.policy, emit })
  const passwordReset = config.routes.passwordReset
  const resetLinks = passwordReset === undefined ? undefined : createResetLinks({ oneTimeTokens, outbox, mailLimit, ttlMs: passwordReset.ttlMs })
  const passkeys = createPasskeys(config.passkeys, { accounts, oneTimeTokens, storeCall, emit, log })

  // The account's rules act on all of these; the routes and the admin API reach the account store only through them.
  const accountParts: AccountParts = {
    accountService: new AccountService(config.accounts, storeCall, accounts),
    sessionService,
    oneTimeTokens,
    throttle: attemptThrottle,
    mailLimit,
    outbox,
    activity,
    storeCall,
    emit,
    log,
    secondFactor: mfa?.secondFactor,
    trustedDevices: mfa?.trustedDevices,
    passkeys
  }

  fastify.decorate('passwordAuth', {
    stats: () => password.hasher.stats(),
    sessions: createSessionApi({ sessionService, accounts, refreshCookie: cookies?.refresh }),
    admin: createAdmin({ ...accountParts, resetLinks, deletionNeeds: config.account.deletionNeeds }),
    reseal: async () => await mfa?.secondFactor.resealAll() ?? { resealed: 0, unreadable: 0 }
  } satisfies PasswordAuthDecorator)

  await registerRoutes(fastify, {
    ...password,
    ...accountParts,
    accessTokens,
    refresh: config.sessions.refresh.enabled,
    reauthMaxAge: config.sessions.reauthMaxAge,
    refreshCookie: cookies?.refresh,
    knownDevices,
    mfaTtlMs: mfa?.ttlMs ?? 0,
    resetLinks,
    account: config.account,
    noticeNewDevice
  }, {
    routes: config.routes,
    answerError,
    rateLimit: config.throttle.rateLimit,
    jwks: { path: config.tokens.jwksPath, keys: config.tokens.keys }
  })
}
