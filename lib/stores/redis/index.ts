/** Redis-backed stores (`fastify-password-auth/redis`); need the optional peer dependency ioredis, or redis (node-redis 5). */
export type { NodeRedisClient, RedisClient } from './client.js'
export { RedisAttemptStore, type RedisAttemptStoreOptions } from './attempts.js'
export { RedisSessionStore, type RedisSessionStoreOptions } from './sessions.js'
export { RedisOneTimeTokenStore, type RedisOneTimeTokenStoreOptions } from './one-time-tokens.js'
export { RedisMfaStore, type RedisMfaStoreOptions } from './mfa.js'
export { RedisPasskeyStore, type RedisPasskeyStoreOptions } from './passkeys.js'
export { RedisTrustedDeviceStore, type RedisTrustedDeviceStoreOptions } from './trusted-devices.js'
