/**
 * Loaded with `--import` into the example server by the bench's `example` section, and nowhere else. The
 * server stays as `npm start` runs it; this adds what the bench server has beside its measured routes:
 * POST /bench/sessions (live sessions for tokens the bench signs, one Logout each, without Login's argon2:
 * Login makes about 200 a second, Logout spends thousands), the bench server's hand-written POST /hand/logout
 * (hand-logout.ts, on a @fastify/jwt of its own in a context of its own: the same code in both processes, so the
 * pair tells what the example's set-up costs a request) and, with BENCH_PROFILE_DIR, the profiler.
 */
import { randomBytes } from 'node:crypto'
import { subscribe } from 'node:diagnostics_channel'
import fastifyJwt from '@fastify/jwt'
import type { FastifyInstance } from 'fastify'
import { MemorySessionStore } from '../../lib/index.js'
import { registerHandLogout } from './hand-logout.js'
import { registerProfiler } from './profiler.js'
import { activeId, BENCH_SECRET, BENCH_SESSION_POLICY } from './settings.js'

// The example's session store, met at its first session (the bench's Logins for GET /me come first).
let store: MemorySessionStore | undefined
const create = MemorySessionStore.prototype.create
MemorySessionStore.prototype.create = async function (this: MemorySessionStore, ...args: Parameters<MemorySessionStore['create']>) {
  store = this
  return await create.apply(this, args)
}

subscribe('fastify.initialization', (message) => {
  const { fastify } = message as { fastify: FastifyInstance }
  fastify.post<{ Body: { count: number } }>('/bench/sessions', async (request, reply) => {
    if (store === undefined) return await reply.code(409).send({ message: 'log in once first: the session store is found at its first session' })
    return await Promise.all(Array.from({ length: request.body.count }, async (_, i) => {
      const session = { id: randomBytes(16).toString('base64url'), accountId: activeId(i), credentialVersion: 0, keyId: '', ip: '', userAgent: '' }
      await store!.create(session, BENCH_SESSION_POLICY)
      return { sub: session.accountId, sid: session.id }
    }))
  })
  // As the bench server registers it (server.ts), without the sign options /hand/login needs.
  fastify.register(async function handWritten (hand) {
    await hand.register(fastifyJwt, { secret: BENCH_SECRET, verify: { algorithms: ['HS256'] } })
    registerHandLogout(hand)
  })
  const profileDir = process.env.BENCH_PROFILE_DIR
  if (profileDir !== undefined && profileDir !== '') registerProfiler(fastify, profileDir)
})
