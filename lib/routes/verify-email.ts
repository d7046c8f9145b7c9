import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { requestError } from '../common/errors.js'
import type { VerificationFailureReason } from '../common/events.js'
import { BODY_ERRORS, noContentResponse, problemResponses } from '../http/openapi.js'
import { VerifyEmailBody } from '../http/schemas.js'
import type { RouteContext } from './context.js'

const PURPOSE = 'verify_email'

/**
 * POST /VerifyEmail: a live verification token and the password its registration chose create the account,
 * once. The verification is bound to whoever registered: a stranger who registered the owner's address
 * first never has the owner's click confirm the stranger's password. A wrong password does not use the
 * token up (the owner may mistype) but counts on it: the 5th kills it. Then the token is consumed atomically,
 * and the store's create() refuses an address that got an account meanwhile. It does not log in.
 */
export function registerVerifyEmail (app: FastifyInstance, { accounts, hasher, storeCall, emit, oneTimeTokens, tokenGuesses }: RouteContext): void {
  function invalid (request: FastifyRequest, reason: VerificationFailureReason): Error {
    emit(request, { type: 'account.verification_failed', reason })
    return requestError('FST_PWAUTH_VERIFY_TOKEN_INVALID')
  }

  /** Whether `password` is the one the registration chose, counted on the token: its 5th wrong one kills it. */
  async function passwordMatches (request: FastifyRequest, token: string, passwordHash: string, password: string): Promise<boolean> {
    const guess = await tokenGuesses.reserve(request, oneTimeTokens.codeAttemptsKey(token)!)
    // Killed by its 5th wrong password, or as many guesses in flight as it has left.
    if (guess === null) return false
    let matches
    try {
      matches = await hasher.verify(passwordHash, password, guess.startBy)
    } catch (err) {
      await guess.settle('cancel').catch(() => {})
      throw err
    }
    if (matches) {
      await guess.settle('success')
      return true
    }
    if (await guess.settle('failure') > 0) await oneTimeTokens.consume(request, token, PURPOSE).catch(() => {})
    return false
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/VerifyEmail', {
    schema: {
      summary: 'Verify the e-mail address of a registration, which creates the account',
      description: 'The token comes from the link of a verify_email message; the password is the one chosen at Register. ' +
        'The account is created active; sign in with that password. Every failure is one 400; 5 wrong passwords kill the token.',
      tags: ['Auth'],
      body: VerifyEmailBody,
      response: {
        204: noContentResponse('The account exists now.'),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_VERIFY_TOKEN_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const { token, password } = request.body
    const pending = await oneTimeTokens.find(request, token, PURPOSE)
    if (pending?.passwordHash === undefined) throw invalid(request, 'invalid_token')
    if (!await passwordMatches(request, token, pending.passwordHash, password)) throw invalid(request, 'wrong_password')
    const consumed = await oneTimeTokens.consume(request, token, PURPOSE)
    if (consumed?.passwordHash === undefined) throw invalid(request, 'invalid_token')
    const account = await storeCall(request.log, 'accounts.create', async () =>
      await accounts.create!({ email: consumed.email, passwordHash: consumed.passwordHash!, fields: consumed.fields ?? {} }))
    if (account === null) throw invalid(request, 'taken')
    emit(request, { type: 'account.registered', accountId: account.id, email: account.email })
    return await reply.code(204).send()
  })
}
