import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { requestError } from '../../common/errors.js'
import type { VerificationFailureReason } from '../../common/events.js'
import { BODY_ERRORS, noContentResponse, problemResponses } from '../../http/openapi.js'
import { VerifyEmailBody } from '../../http/schemas.js'
import { PURPOSE } from '../../tokens/purposes.js'
import type { RouteContext } from '../context.js'

/**
 * POST /VerifyEmail: a live verification token and a password create the account, once, with that password
 * (contract §14). Holding the link proves the mailbox, so whoever holds it chooses the password, whoever asked
 * for the link: a stranger who registered the owner's address never sees the link, and his password never
 * reaches the account. The policy refuses a password before anything is used up. The password is hashed
 * anew rather than verified against the registration's hash: one argon2 run either way, so the time says
 * nothing about the password typed at Register, and there is no second run when it differs. Then the token
 * is consumed atomically (one winner among concurrent uses), and the store's create() refuses an address
 * that got an account meanwhile. It does not log in.
 */
export function registerVerifyEmail (app: FastifyInstance, { accountService, hasher, policy, emit, oneTimeTokens }: RouteContext): void {
  function invalid (request: FastifyRequest, reason: VerificationFailureReason): Error {
    emit(request, { type: 'account.verification_failed', reason })
    return requestError('FST_PWAUTH_VERIFY_TOKEN_INVALID')
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/VerifyEmail', {
    schema: {
      summary: 'Verify the e-mail address of a registration, which creates the account',
      description: 'The token comes from the link of a verify_email message; the password becomes the account\'s (usually the one typed at Register). ' +
        'The account is created active; sign in with that password. A weak password is refused and the link keeps working.',
      tags: ['Auth'],
      body: VerifyEmailBody,
      response: {
        204: noContentResponse('The account exists now.'),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_VERIFY_TOKEN_INVALID', 'FST_PWAUTH_WEAK_PASSWORD', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const { token, password } = request.body
    const pending = await oneTimeTokens.find(request, token, PURPOSE.verifyEmail)
    if (pending?.passwordHash === undefined) throw invalid(request, 'invalid_token')
    const reasons = await policy.evaluate(password, undefined, pending.email, request)
    if (reasons.length > 0) throw requestError('FST_PWAUTH_WEAK_PASSWORD', { reasons })
    // Hashed before the token is used up: a full hashing queue answers 503 and leaves the link working.
    const passwordHash = await hasher.hash(password)
    const consumed = await oneTimeTokens.consume(request, token, PURPOSE.verifyEmail)
    if (consumed?.passwordHash === undefined) throw invalid(request, 'invalid_token')
    const account = await accountService.create(request, { email: consumed.email, passwordHash, fields: consumed.fields ?? {} })
    if (account === null) throw invalid(request, 'taken')
    emit(request, { type: 'account.registered', accountId: account.id, email: account.email })
    return await reply.code(204).send()
  })
}
