/** Redis-backed stores (`fastify-password-auth/redis`); needs the optional peer dependency ioredis. */
export { RedisAttemptStore, type RedisAttemptStoreOptions } from './attempts.js'
export { RedisSessionStore, type RedisSessionStoreOptions } from './sessions.js'
export { RedisOneTimeTokenStore, type RedisOneTimeTokenStoreOptions } from './one-time-tokens.js'
export { RedisMfaStore, type RedisMfaStoreOptions } from './mfa.js'
export { RedisPasskeyStore, type RedisPasskeyStoreOptions } from './passkeys.js'
export { RedisTrustedDeviceStore, type RedisTrustedDeviceStoreOptions } from './trusted-devices.js'
