/** Redis-backed stores (`fastify-password-auth/redis`); needs the optional peer dependency ioredis. */
export { RedisRevocationStore, type RedisRevocationStoreOptions } from './stores/redis-revocations.js'
