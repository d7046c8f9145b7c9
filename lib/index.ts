import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import type { PasswordAuthOptions } from './options.js'
import type { PasswordAuthInstanceDecorators, PasswordAuthRequestDecorators } from './guard/decorators.js'
import { passwordAuth, type PasswordAuthDecorator } from './plugin.js'

declare module 'fastify' {
  // Extended rather than declared, so that a host's own `authenticate` (any, or a compatible type) wins.
  interface FastifyInstance extends PasswordAuthInstanceDecorators {
    passwordAuth: PasswordAuthDecorator
  }
  interface FastifyRequest extends PasswordAuthRequestDecorators {}
}

/**
 * E-mail + password authentication under {prefix}: sign-in with argon2id and throttling, sessions with revocable access tokens
 * and refresh tokens, and as the options turn them on the session routes, sign-up, password reset, two factors, passkeys and
 * account self-service; the `authenticate` guard for the host's routes, and `fastify.passwordAuth` (sessions, admin, reseal).
 */
const fastifyPasswordAuth: FastifyPluginAsync<PasswordAuthOptions> = fp(passwordAuth, {
  fastify: '5.x',
  name: 'fastify-password-auth'
})

// Ordered like the README's export table: values first, then the types a host names.
export default fastifyPasswordAuth
export { fastifyPasswordAuth }
export { authenticate, authenticateStrategy, optionalAuthenticate, requireMfa, requireRecentAuthentication, type Authenticate } from './guard/authenticate.js'
export type { PasswordAuthSession } from './guard/token-check.js'
export { authenticated, type AuthenticatedOptions, type AuthenticatedHandler, type AuthenticatedRequest, type AuthenticatedRoute } from './guard/authenticated.js'
export { authenticateResponses } from './http/openapi.js'
export type { PasswordAuthDecorator }
export { hashPassword, type HashingStats } from './password/hasher.js'
export { MemoryAccountStore, type NewAccount } from './stores/memory/accounts.js'
export { MemoryAttemptStore } from './stores/memory/attempts.js'
export { MemorySessionStore, type MemorySessionStoreOptions } from './stores/memory/sessions.js'
export { MemoryOneTimeTokenStore, type MemoryOneTimeTokenStoreOptions } from './stores/memory/one-time-tokens.js'
export { MemoryMfaStore } from './stores/memory/mfa.js'
export { MemoryActivityStore, type MemoryActivityStoreOptions } from './stores/memory/activity.js'
export { MemoryPasskeyStore } from './stores/memory/passkeys.js'
export { MemoryTrustedDeviceStore, type MemoryTrustedDeviceStoreOptions } from './stores/memory/trusted-devices.js'
export { errors, type ErrorCode, type FieldError, type WeakPasswordReason } from './common/errors.js'
export type { Problem } from './http/problem.js'
export { passwordAuthRedactPaths, passwordAuthRequestSerializer } from './http/redact.js'
export { passwordAuthLogger, redactLogLine } from './http/log-redaction.js'
export { passwordAuthClientErrorHandler } from './http/client-errors.js'

export type { HashingOptions, JwtOptions, PasswordAuthOptions, RateLimitOptions, RefreshOptions, ThrottleOptions } from './options.js'
export type { Argon2Options } from './password/argon2-options.js'
export type { PasswordPolicyOptions } from './password/policy.js'
export type { MfaOptions } from './mfa/options.js'
export type { DeviceDescription } from './http/user-agent.js'
export type { BreachedPasswordsOptions } from './password/breach-options.js'
export type { DeliverMessage, PasswordAuthMessage } from './messages/outbox.js'
export type { LegacyHashFormat } from './password/legacy/index.js'
export type { JwtAlgorithm, JwtKey } from './tokens/keys.js'
export type { PasswordAuthDecoratorNames } from './guard/decorators.js'
export type { DecoratorOptions } from './guard/options.js'
export type {
  AuthEvent, AuthEventDetails, AuthEventHandler, AuthEventType, ChangeFailureReason, LoginFailureReason, MfaRoute, RefreshFailureReason,
  VerificationFailureReason, PasswordRoute, ResetRequiredReason, TrustEndReason
} from './common/events.js'
export type {
  AccountFields, AccountStore, AttemptOutcome, AttemptStore, MfaStore, NewSession, OneTimeToken, OneTimeTokenStore, PasswordAuthAccount, PasswordHashUpdate, Reservation, RotationResult,
  SessionEndReason, SessionInfo, SessionPolicy, SessionState, SessionStore, SessionTimes, StoredAccount, StoredMfa, ThrottlePolicy,
  ActivityRecord, ActivityStore, EmailUpdate, NewTrustedDevice, TrustedDeviceInfo, TrustedDeviceStore
} from './stores/types.js'
export type { PasskeyAddResult, PasskeyStore, StoredPasskey } from './stores/types.js'
export type { PasskeyFailureReason, PasskeyRoute } from './common/events.js'
export type { PasskeysPluginOptions } from './passkeys/options.js'
