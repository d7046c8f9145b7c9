import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import type { PasswordAuthOptions } from './options.js'
import { passwordAuth, type Authenticate, type PasswordAuthDecorator } from './plugin.js'
import type { PasswordAuthAccount } from './stores/types.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Guard for your routes: `{ onRequest: fastify.authenticate }`. Answers 401/503 problem+json itself. */
    authenticate: Authenticate
    passwordAuth: PasswordAuthDecorator
  }
  interface FastifyRequest {
    /** The authenticated account (without its password hash) once `authenticate` has passed; else null. */
    account: PasswordAuthAccount | null
  }
}

/** Email + password authentication: POST {prefix}/Login, /ChangePassword and /Logout, and `fastify.authenticate`. */
const fastifyPasswordAuth: FastifyPluginAsync<PasswordAuthOptions> = fp(passwordAuth, {
  fastify: '5.x',
  name: 'fastify-password-auth'
})

export default fastifyPasswordAuth
export { fastifyPasswordAuth }
export type { Authenticate, PasswordAuthDecorator }
export type { HashingOptions, JwtOptions, PasswordAuthOptions, RateLimitOptions, ThrottleOptions } from './options.js'
export type { AuthEvent, AuthEventDetails, AuthEventHandler, AuthEventType, ChangeFailureReason, LoginFailureReason } from './events.js'
export { errors, type ErrorCode, type FieldError, type WeakPasswordReason } from './errors.js'
export type { Problem } from './problem.js'
export { passwordAuthRedactPaths } from './redact.js'
export { DEFAULT_ARGON2, hashPassword, type Argon2Params, type HashingStats } from './password.js'
export type { PasswordPolicyOptions } from './password-policy.js'
export type { AccessTokenClaims, JwtAlgorithm } from './tokens.js'
export type {
  AccountStore, AttemptOutcome, AttemptStore, PasswordAuthAccount, PasswordHashUpdate, Reservation, RevocationStore,
  StoredAccount, ThrottlePolicy
} from './stores/types.js'
export { MemoryAccountStore, type NewAccount } from './stores/memory-accounts.js'
export { MemoryAttemptStore } from './stores/memory-attempts.js'
export { MemoryRevocationStore } from './stores/memory-revocations.js'
