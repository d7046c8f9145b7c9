import type { FastifyInstance } from 'fastify'

/**
 * Warns, once per registration, about host server settings that undo the plugin's limits: with
 * Fastify's default requestTimeout of 0 a client can hold a connection (and a file descriptor) open
 * forever by sending its body one byte at a time, and enough such clients starve the server.
 */
export function warnAboutHostSettings (fastify: FastifyInstance): void {
  // Fastify's initialConfig has requestTimeout at run time; its type leaves it out.
  if ((fastify.initialConfig as { requestTimeout?: number }).requestTimeout === 0) {
    fastify.log.warn('fastify-password-auth: the server\'s requestTimeout is 0 (Fastify\'s default), so slow clients can hold ' +
      'connections open forever; set requestTimeout (e.g. 10000 ms) and connectionTimeout in Fastify\'s options ' +
      '(see the README, "Server timeouts")')
  }
}
