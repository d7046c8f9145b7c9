/** Redis-backed stores (`fastify-password-auth/redis`); needs the optional peer dependency ioredis. */
export { RedisAttemptStore, type RedisAttemptStoreOptions } from './stores/redis-attempts.js'
export { RedisRevocationStore, type RedisRevocationStoreOptions } from './stores/redis-revocations.js'
