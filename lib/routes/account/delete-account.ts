import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { deleteAccount } from '../../account/forget-account.js'
import type { DeletionRoutes } from '../../account/options.js'
import { requestError } from '../../common/errors.js'
import { accountOf, authenticate, sessionOf } from '../../guard/authenticate.js'
import { BODY_ERRORS, guardedProblemResponses, noContentResponse } from '../../http/openapi.js'
import { DeleteAccountBody } from '../../http/schemas.js'
import type { RouteContext } from '../context.js'
import { requireSecondFactorSession } from '../security/second-factor-session.js'
import { proveSessionPassword } from '../security/session-password.js'

/**
 * POST /DeleteAccount (guarded, the password, a session that passed two factors when they are on): the password
 * stands for a recent authentication (a token taken by script in the page cannot delete the account). The host's
 * beforeDelete may refuse (409 with its detail); otherwise the account is deleted and forgotten everywhere
 * (account/forget-account.ts). From then on the address is unknown everywhere.
 */
export function registerDeleteAccount (app: FastifyInstance, context: RouteContext, { beforeDelete }: DeletionRoutes): void {
  const { emit, knownDevices } = context

  app.withTypeProvider<TypeBoxTypeProvider>().post('/DeleteAccount', {
    onRequest: authenticate,
    schema: {
      summary: 'Delete your account and everything held of it',
      description: 'With the password (it stands for a recent authentication: no Reauthenticate is needed), and with two factors on a session that passed them. ' +
        'Every session ends; the address, and every address the account left within revertTtl, gets account_deleted.',
      tags: ['Account'],
      security: [{ bearerAuth: [] }],
      body: DeleteAccountBody,
      response: {
        204: noContentResponse('The account is deleted.'),
        ...guardedProblemResponses([...BODY_ERRORS, 'FST_PWAUTH_MFA_REQUIRED', 'FST_PWAUTH_INVALID_CREDENTIALS', 'FST_PWAUTH_TOO_MANY_ATTEMPTS',
          'FST_PWAUTH_PASSWORD_RESET_REQUIRED', 'FST_PWAUTH_DELETE_REFUSED', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const account = accountOf(request)!
    await requireSecondFactorSession(context, request, account.id)
    const device = await knownDevices.recognise(request, account.email, account)
    await proveSessionPassword(context, request, reply, { account, sessionId: sessionOf(request)!.id, password: request.body.password, device, route: 'DeleteAccount' })
    const answer = await beforeDelete?.(account)
    if (typeof answer === 'object' && answer !== null && 'refuse' in answer) {
      emit(request, { type: 'account.delete_refused', accountId: account.id, email: account.email })
      throw requestError('FST_PWAUTH_DELETE_REFUSED', undefined, String(answer.refuse))
    }
    // Gone already (a concurrent DeleteAccount): this token stood for an account that is no more. The account is gone
    // (so is every way back into it) but not all of it: 503, as for any store failure; a retry finds no account (401).
    if (!await deleteAccount(context, request, account)) throw requestError('FST_PWAUTH_TOKEN_INVALID')
    return await reply.code(204).send()
  })
}
