import type { FastifyRequest } from 'fastify'
import type { PasswordAuthAccount } from '../stores/types.js'
import type { RouteContext } from './context.js'

/**
 * A `password_reset` message with a new link for an active account, within the address's budget: what
 * ForgotPassword sends, and what a correct password that must be replaced sends (contract §20). Run it
 * after the answer (outbox.afterResponse): neither store nor mail time may show.
 */
export async function sendResetLink ({ mailLimit, oneTimeTokens, outbox, emit }: Pick<RouteContext, 'mailLimit' | 'oneTimeTokens' | 'outbox' | 'emit'>,
  request: FastifyRequest, account: PasswordAuthAccount, ttlMs: number): Promise<void> {
  const { email } = account
  if (!await mailLimit.take(request, email, 'password_reset')) {
    emit(request, { type: 'password.reset_requested', email, accountId: account.id, outcome: 'limited' })
    return
  }
  const token = await oneTimeTokens.issue(request, 'password_reset', account, ttlMs)
  outbox.send(request, { type: 'password_reset', to: email, token, expiresAt: Date.now() + ttlMs, accountId: account.id })
  emit(request, { type: 'password.reset_requested', email, accountId: account.id, outcome: 'sent' })
}
