import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { requestError } from '../common/errors.js'
import { BODY_ERRORS, noContentResponse, problemResponses } from '../http/openapi.js'
import { VerifyEmailBody } from '../http/schemas.js'
import type { RouteContext } from './context.js'

/**
 * POST /VerifyEmail: a live verification token creates the account, once: the token is consumed
 * atomically, and the store's create() refuses an address that got an account in the meantime (another
 * pending registration of it verified first). It does not log in.
 */
export function registerVerifyEmail (app: FastifyInstance, { accounts, storeCall, emit, oneTimeTokens }: RouteContext): void {
  function invalid (request: FastifyRequest, reason: 'invalid_token' | 'taken'): Error {
    emit(request, { type: 'account.verification_failed', reason })
    return requestError('FST_PWAUTH_VERIFY_TOKEN_INVALID')
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/VerifyEmail', {
    schema: {
      summary: 'Verify the e-mail address of a registration, which creates the account',
      description: 'The token comes from the link of a verify_email message. The account is created active; sign in with the registered password.',
      tags: ['Auth'],
      body: VerifyEmailBody,
      response: {
        204: noContentResponse('The account exists now.'),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_VERIFY_TOKEN_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const { token } = request.body
    const pending = await oneTimeTokens.consume(request, token, 'verify_email')
    if (pending === null || pending.passwordHash === undefined) throw invalid(request, 'invalid_token')
    const account = await storeCall(request.log, 'accounts.create', async () =>
      await accounts.create!({ email: pending.email, passwordHash: pending.passwordHash!, fields: pending.fields ?? {} }))
    if (account === null) throw invalid(request, 'taken')
    emit(request, { type: 'account.registered', accountId: account.id, email: account.email })
    return await reply.code(204).send()
  })
}
