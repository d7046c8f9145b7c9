import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { DeletionRoutes } from '../../account/options.js'
import { requestError } from '../../common/errors.js'
import { accountOf, authenticate, sessionOf } from '../../guard/authenticate.js'
import { BODY_ERRORS, guardedProblemResponses, noContentResponse } from '../../http/openapi.js'
import { DeleteAccountBody } from '../../http/schemas.js'
import type { PasswordAuthAccount } from '../../stores/types.js'
import { PURPOSE, type TokenPurpose } from '../../tokens/purposes.js'
import type { RouteContext } from '../context.js'
import { requireSecondFactorSession } from '../security/second-factor-session.js'
import { proveSessionPassword } from '../security/session-password.js'

/**
 * Everything the plugin holds of an account, in every store: its sessions (live and ended), second factor and code
 * counters, one-time tokens (links, login and passkey challenges), the address's attempt counter and message budgets,
 * its known devices' counters, trusted devices, passkeys, activity. Run after the account itself is gone, so nothing
 * new can be started for it meanwhile and whatever a failing store leaves is inert (every token, challenge and link is
 * checked against the account). Each part is tried even when an earlier one failed; resolves the parts that failed.
 */
async function forgetAccount (context: RouteContext, request: FastifyRequest, account: PasswordAuthAccount, formerEmails: string[]): Promise<{ failed: string[], error?: unknown }> {
  const { sessionService, secondFactor, trustedDevices, oneTimeTokens, throttle, mailLimit, passkeys, activity, storeCall } = context
  const parts: Array<[string, (() => Promise<unknown>) | undefined]> = [
    ['sessions', async () => await sessionService.forget(request, account.id)],
    ['mfa', secondFactor === undefined ? undefined : async () => await secondFactor.forget(request, account.id)],
    ['trustedDevices', trustedDevices === undefined ? undefined : async () => { await trustedDevices.forget(request, account.id) }],
    ['oneTimeTokens', async () => { await oneTimeTokens.forgetAccount(request, account.id, [PURPOSE.passwordReset, PURPOSE.emailChange, [PURPOSE.emailRevert, account.email], ...formerEmails.map((email) => [PURPOSE.emailLeft, email] as [TokenPurpose, string])]) }],
    ['attempts', async () => { await throttle.forget(request, account.email) }],
    ['deviceAttempts', async () => { await throttle.forgetAccount(request, account.id) }],
    ['mailLimit', async () => { await mailLimit.forget(request, account.email) }],
    ['passkeys', passkeys === undefined ? undefined : async () => await passkeys.forget(request, account.id)],
    ['activity', async () => { await storeCall(request.log, 'activity.forget', () => activity.forget(account.id)) }]
  ]
  const result: { failed: string[], error?: unknown } = { failed: [] }
  for (const [name, forget] of parts) {
    try {
      await forget?.()
    } catch (err) {
      result.failed.push(name)
      result.error ??= err
    }
  }
  return result
}

/**
 * POST /DeleteAccount (guarded, the password, a session that passed two factors when they are on): the password
 * stands for a recent authentication (a token taken by script in the page cannot delete the account). The host's
 * beforeDelete may refuse (409 with its detail); otherwise the account is deleted through the account store first
 * (the one step that ends every way into it), then everything of it in the other stores. account_deleted goes to the
 * address and to every address the account left within revertTtl (by a change or a revert: a taker who moved the
 * account away first cannot delete it unseen). From then on the address is unknown everywhere.
 */
export function registerDeleteAccount (app: FastifyInstance, context: RouteContext, { beforeDelete }: DeletionRoutes): void {
  const { accounts, storeCall, emit, outbox, knownDevices, oneTimeTokens } = context

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
    // Read before anything goes: the notes go with the account's tokens.
    const formerEmails = (await oneTimeTokens.notes(request, PURPOSE.emailLeft, account.id)).filter((email) => email !== account.email)
    // Gone already (a concurrent DeleteAccount): this token stood for an account that is no more.
    if (!await storeCall(request.log, 'accounts.delete', async () => await accounts.delete!(account.id))) throw requestError('FST_PWAUTH_TOKEN_INVALID')
    const { failed, error } = await forgetAccount(context, request, account, formerEmails)
    emit(request, { type: 'account.deleted', accountId: account.id, email: account.email, ...(failed.length > 0 ? { leftovers: failed } : {}) })
    for (const to of [account.email, ...new Set(formerEmails)]) outbox.send(request, { type: 'account_deleted', to, accountId: account.id })
    // The account is gone (so is every way back into it), but not all of it: 503, as for any store failure. A retry
    // finds no account (401); what is left expires by itself.
    if (error !== undefined) throw error
    return await reply.code(204).send()
  })
}
