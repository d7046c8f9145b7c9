import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { BODY_ERRORS, noContentResponse, problemResponses } from '../../http/openapi.js'
import { ForgotPasswordBody } from '../../http/schemas.js'
import { normalizeEmail } from '../../stores/email.js'
import { PURPOSE } from '../../tokens/purposes.js'
import type { RouteContext } from '../context.js'
import type { PasswordResetRoutes } from '../options.js'

/**
 * POST /ForgotPassword: one 202 for every address. Before the answer only the account lookup runs, the
 * same for every address (a store outage is a 503 for all alike); the message limit, the token and the
 * delivery happen after it, so neither store nor mail time shows.
 */
export function registerForgotPassword (app: FastifyInstance, { accountService, outbox, mailLimit, oneTimeTokens, emit }: RouteContext, { ttlMs }: PasswordResetRoutes): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post('/ForgotPassword', {
    schema: {
      summary: 'Ask for a password reset link',
      description: 'Answers 202 whatever the address. An active account gets a password_reset message with a one-time token, delivered by the host.',
      tags: ['Auth'],
      body: ForgotPasswordBody,
      response: {
        202: noContentResponse('Accepted: if the address has an active account, a reset message is on its way.'),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const email = normalizeEmail(request.body.email)
    const account = await accountService.findByEmail(request, email)
    outbox.afterResponse(reply, async () => {
      if (account === null || !account.active) {
        emit(request, { type: 'password.reset_requested', email, accountId: account?.id, outcome: account === null ? 'unknown_account' : 'inactive_account' })
        return
      }
      if (!await mailLimit.take(request, email, 'password_reset')) {
        emit(request, { type: 'password.reset_requested', email, accountId: account.id, outcome: 'limited' })
        return
      }
      const token = await oneTimeTokens.issue(request, PURPOSE.passwordReset, account, ttlMs)
      outbox.send(request, { type: 'password_reset', to: account.email, token, expiresAt: Date.now() + ttlMs, accountId: account.id })
      emit(request, { type: 'password.reset_requested', email, accountId: account.id, outcome: 'sent' })
    })
    return await reply.code(202).send()
  })
}
