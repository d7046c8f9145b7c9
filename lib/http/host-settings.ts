import { isIP } from 'node:net'
import type { FastifyInstance } from 'fastify'

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/

/**
 * Warns about host server settings that undo the plugin's limits: with Fastify's default requestTimeout
 * of 0 a client can hold a connection (and a file descriptor) open forever by sending its body one byte
 * at a time, and enough such clients starve the server. Only once the server listens where others can
 * reach it: on loopback (a quick start, tests) the warning would be noise.
 */
export function warnAboutHostSettings (fastify: FastifyInstance): void {
  // Fastify's initialConfig has requestTimeout at run time; its type leaves it out.
  if ((fastify.initialConfig as { requestTimeout?: number }).requestTimeout !== 0) return
  fastify.addHook('onListen', function warnIfExposed (done) {
    const exposed = fastify.addresses().some((info) => typeof info === 'object' && isIP(info.address) !== 0 && !LOOPBACK.test(info.address))
    if (exposed) {
      fastify.log.warn('fastify-password-auth: the server\'s requestTimeout is 0 (Fastify\'s default), so slow clients can hold ' +
      'connections open forever; set requestTimeout (e.g. 10000 ms) and connectionTimeout in Fastify\'s options ' +
      '(see example/docs/production.md, "Server timeouts", in the repository)')
    }
    done()
  })
}
