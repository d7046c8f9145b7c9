import type { FastifyRequest } from 'fastify'
import { requestError } from './errors.js'

/** Calls a store on behalf of a request; any failure or timeout becomes 503. */
export type StoreCall = <T>(request: FastifyRequest, operation: string, call: () => Promise<T>) => Promise<T>

class StoreTimeoutError extends Error {
  readonly code = 'FST_PWAUTH_STORE_TIMEOUT'
}

/**
 * Store calls fail closed: an error, or no answer within `timeoutMs` (a blackholed connection, a frozen
 * server, a client queueing commands while it reconnects), is a 503 so a request never hangs on a store.
 * The log gets the error's name, code and message only: a store client's error object may carry the
 * command and its arguments.
 */
export function createStoreCall (timeoutMs: number): StoreCall {
  return async function storeCall (request, operation, call) {
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([
        call(),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => { reject(new StoreTimeoutError(`no answer within ${timeoutMs} ms`)) }, timeoutMs)
        })
      ])
    } catch (err) {
      const { name, code, message } = (err ?? {}) as { name?: unknown, code?: unknown, message?: unknown }
      request.log.error({ operation, storeError: { name, code, message: String(message).slice(0, 300) } },
        'fastify-password-auth: store failed')
      throw requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 })
    } finally {
      clearTimeout(timer)
    }
  }
}
