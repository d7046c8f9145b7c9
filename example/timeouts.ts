import type { Server } from 'node:http'
import type { FastifyHttpOptions } from 'fastify'

export type ServerTimeouts = Pick<FastifyHttpOptions<Server>, 'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout' | 'http' | 'pluginTimeout'>

/**
 * The example server's timeouts (example/docs/production.md, "Server timeouts"). Fastify's defaults (requestTimeout and
 * connectionTimeout 0) let a client hold a connection, and its file descriptor, forever by sending a
 * body one byte at a time.
 *
 * - requestTimeout (default 10 s): the whole request, headers and body. A login body is at most 16 KiB
 *   and headers at most 16 KiB; on a 50 kbit/s link both arrive in about 5 s, so 10 s leaves 2x, and a
 *   client holding a connection has to come back every 10 s.
 * - headersTimeout: the same deadline (Node requires it to be no longer than requestTimeout).
 * - connectionsCheckingInterval (1 s): how often Node looks for expired requests; its default of 30 s
 *   would let a 10 s deadline run to 40 s.
 * - connectionTimeout (30 s, at least requestTimeout): a socket with no traffic either way. Longer than
 *   the slowest answer the plugin gives (about 8 s: a full hashing queue plus its store calls), so it
 *   only cuts dead peers.
 * - keepAliveTimeout (5 s, Node's default; Fastify's 72 s suits a load balancer that reuses connections):
 *   an idle connection between requests costs a file descriptor for nothing.
 * - pluginTimeout (30 s; Fastify's default is 10 s): each registration of the plugin starts its hashing threads and
 *   hashes once before it answers, which a small or busy machine (a CI runner, a container's first start) can stretch
 *   past 10 s, failing the start for no fault.
 */
export function serverTimeouts (requestTimeoutSeconds: number): ServerTimeouts {
  const requestTimeout = requestTimeoutSeconds * 1000
  return {
    requestTimeout,
    http: { headersTimeout: requestTimeout, connectionsCheckingInterval: Math.min(1000, requestTimeout) },
    connectionTimeout: Math.max(30_000, requestTimeout),
    keepAliveTimeout: 5000,
    pluginTimeout: 30_000
  }
}
