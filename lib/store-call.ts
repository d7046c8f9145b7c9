import type { FastifyRequest } from 'fastify'
import { requestError } from './errors.js'

/**
 * Calls a store; any failure becomes 503 so authentication fails closed. The log gets the error's name,
 * code and message only: a store client's error object may carry the command and its arguments.
 */
export async function storeCall<T> (request: FastifyRequest, operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    const { name, code, message } = (err ?? {}) as { name?: unknown, code?: unknown, message?: unknown }
    request.log.error({ operation, storeError: { name, code, message: String(message).slice(0, 300) } },
      'fastify-password-auth: store failed')
    throw requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 })
  }
}
