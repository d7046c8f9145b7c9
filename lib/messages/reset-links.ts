import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { PasswordAuthAccount } from '../stores/types.js'
import type { OneTimeTokens } from '../tokens/one-time-tokens.js'
import { PURPOSE } from '../tokens/purposes.js'
import type { MailLimit } from './mail-limit.js'
import type { Outbox } from './outbox.js'

/**
 * Sends an account a password_reset link as ForgotPassword would: for a refused password that only the mailbox can
 * restore (contract §20, §22). Undefined while resets are off (there is no ResetPassword to use the link at).
 */
export interface ResetLinks {
  /**
   * Issues a reset token (replacing the account's earlier one) and hands the message to `deliver`. With a request, the
   * address's password_reset budget counts it (a refused login must not flood the mailbox); an admin's call is not counted.
   * Resolves whether a message went out.
   */
  send (caller: { request: FastifyRequest } | { log: FastifyBaseLogger }, account: PasswordAuthAccount): Promise<boolean>
}

export function createResetLinks ({ oneTimeTokens, outbox, mailLimit, ttlMs }: { oneTimeTokens: OneTimeTokens, outbox: Outbox, mailLimit: MailLimit, ttlMs: number }): ResetLinks {
  return {
    async send (caller, account) {
      const request = 'request' in caller ? caller.request : undefined
      if (request !== undefined && !await mailLimit.take(request, account.email, 'password_reset')) return false
      const token = await oneTimeTokens.issue(request ?? caller as { log: FastifyBaseLogger }, PURPOSE.passwordReset, account, ttlMs)
      outbox.send(request, { type: 'password_reset', to: account.email, token, expiresAt: Date.now() + ttlMs, accountId: account.id })
      return true
    }
  }
}
