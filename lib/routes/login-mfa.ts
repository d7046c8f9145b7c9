import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { requestError } from '../common/errors.js'
import { BODY_ERRORS, jsonResponse, problemResponses, setCookieHeader } from '../http/openapi.js'
import { documentedTokenReply, LoginMfaBody } from '../http/schemas.js'
import { accountAccepts } from '../session/account-rule.js'
import type { SecondFactor } from '../mfa/second-factor.js'
import { tokenBody } from '../session/token-body.js'
import type { RouteContext } from './context.js'

const PURPOSE = 'mfa_login'

/**
 * POST /LoginMfa: the second step of a Login for an account with two factors on. The challenge (mfaToken)
 * is a one-time token of its own purpose, so no other route takes it; it is used up by the success, and
 * killed by its 5th wrong code. Codes also count on the account's code counter (SecondFactor).
 */
export function registerLoginMfa (app: FastifyInstance, context: RouteContext & { secondFactor: SecondFactor }): void {
  const { accounts, sessionService, knownDevices, storeCall, emit, cookie, refresh, secondFactor, oneTimeTokens: tokens } = context

  function invalid (request: FastifyRequest, accountId?: string): Error {
    emit(request, { type: 'mfa.failed', route: 'LoginMfa', reason: 'invalid', accountId })
    return requestError('FST_PWAUTH_MFA_CODE_INVALID')
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/LoginMfa', {
    schema: {
      summary: 'Finish a Login with a second factor',
      description: 'With the mfaToken of the Login answer and a code from the authenticator app (or a recovery code): starts the session.',
      tags: ['Auth'],
      body: LoginMfaBody,
      response: {
        200: jsonResponse('Logged in: an access token and, with refresh on, a refresh token.',
          documentedTokenReply({ refresh, cookie: cookie !== undefined, device: true }), cookie === undefined ? {} : setCookieHeader(cookie, 'set')),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_MFA_CODE_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const { mfaToken, code } = request.body
    const challenge = await tokens.find(request, mfaToken, PURPOSE)
    if (challenge === null) throw invalid(request)
    const account = await storeCall(request.log, 'accounts.findById', () => accounts.findById(challenge.accountId))
    // A password change or a deactivation since the Login ends the challenge with the account's tokens.
    if (!accountAccepts(account, challenge.credentialVersion)) throw invalid(request, challenge.accountId)

    const check = await secondFactor.check(request, account.id, code, { tokenKey: tokens.codeAttemptsKey(mfaToken)! })
    if (typeof check === 'object') {
      emit(request, { type: 'mfa.failed', route: 'LoginMfa', reason: 'throttled', accountId: account.id })
      throw requestError('FST_PWAUTH_TOO_MANY_ATTEMPTS', { retryAfter: check.retryAfter })
    }
    if (check === 'spent') await tokens.consume(request, mfaToken, PURPOSE).catch(() => {})
    if (check !== 'accepted') throw invalid(request, account.id)
    // Of concurrent successes with one challenge, one starts the session.
    if (await tokens.consume(request, mfaToken, PURPOSE) === null) throw invalid(request, account.id)

    const { sessionId, tokens: issued } = await sessionService.start(request, account, true)
    emit(request, { type: 'login.succeeded', accountId: account.id, email: account.email, sessionId, mfa: true })
    return { ...tokenBody(reply, issued, cookie), ...knownDevices.issue(reply, account.email, knownDevices.recognise(request, account.email)) }
  })
}
