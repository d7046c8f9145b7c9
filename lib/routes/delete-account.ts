import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { DeletionRoutes } from '../account/options.js'
import { requestError } from '../common/errors.js'
import { accountOf, authenticate, requireRecentAuthentication } from '../guard/authenticate.js'
import { guardedProblemResponses, noContentResponse } from '../http/openapi.js'
import type { PasswordAuthAccount } from '../stores/types.js'
import { EMAIL_CHANGE, EMAIL_REVERT } from './change-email.js'
import type { RouteContext } from './context.js'
import { requireSecondFactorSession } from './second-factor-session.js'

/**
 * Everything the plugin holds of an account, in every store: its sessions (live and ended), second factor and code
 * counters, one-time tokens (links, login and passkey challenges), the address's attempt counter and message budgets,
 * its known devices' counters, trusted devices, passkeys, activity. Run after the account itself is gone, so nothing
 * new can be started for it meanwhile and whatever a failing store leaves is inert (every token, challenge and link is
 * checked against the account). Each part is tried even when an earlier one failed; resolves the parts that failed.
 */
async function forgetAccount (context: RouteContext, request: FastifyRequest, account: PasswordAuthAccount): Promise<{ failed: string[], error?: unknown }> {
  const { sessionService, secondFactor, trustedDevices, oneTimeTokens, throttle, mailLimit, passkeys, activity, storeCall } = context
  const parts: Array<[string, (() => Promise<unknown>) | undefined]> = [
    ['sessions', async () => await sessionService.forget(request, account.id)],
    ['mfa', secondFactor === undefined ? undefined : async () => await secondFactor.forget(request, account.id)],
    ['trustedDevices', trustedDevices === undefined ? undefined : async () => { await trustedDevices.forget(request, account.id) }],
    ['oneTimeTokens', async () => { await oneTimeTokens.forgetAccount(request, account.id, ['password_reset', EMAIL_CHANGE, [EMAIL_REVERT, account.email]]) }],
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
 * POST /DeleteAccount (no body; guarded, recent authentication, a session that passed two factors when they are
 * on): the host's beforeDelete may refuse (409 with its detail); otherwise the account is deleted through the
 * account store first (the one step that ends every way into it), then everything of it in the other stores, and
 * the address gets account_deleted. From then on the address is unknown everywhere.
 */
export function registerDeleteAccount (app: FastifyInstance, context: RouteContext, { beforeDelete }: DeletionRoutes): void {
  const { accounts, storeCall, emit, outbox, reauthMaxAge } = context

  app.post('/DeleteAccount', {
    onRequest: [authenticate, requireRecentAuthentication(reauthMaxAge)],
    schema: {
      summary: 'Delete your account and everything held of it',
      description: `Needs a password proof within the last ${reauthMaxAge} s (Reauthenticate), and with two factors on a session that passed them. ` +
        'The body is ignored. Every session ends; the address gets account_deleted.',
      tags: ['Account'],
      security: [{ bearerAuth: [] }],
      response: {
        204: noContentResponse('The account is deleted.'),
        ...guardedProblemResponses(['FST_PWAUTH_MFA_REQUIRED', 'FST_PWAUTH_DELETE_REFUSED', 'FST_PWAUTH_UNAVAILABLE'], { recent: true })
      }
    }
  }, async (request, reply) => {
    const account = accountOf(request)!
    await requireSecondFactorSession(context, request, account.id)
    const answer = await beforeDelete?.(account)
    if (typeof answer === 'object' && answer !== null && 'refuse' in answer) {
      emit(request, { type: 'account.delete_refused', accountId: account.id, email: account.email })
      throw requestError('FST_PWAUTH_DELETE_REFUSED', undefined, String(answer.refuse))
    }
    // Gone already (a concurrent DeleteAccount): this token stood for an account that is no more.
    if (!await storeCall(request.log, 'accounts.delete', async () => await accounts.delete!(account.id))) throw requestError('FST_PWAUTH_TOKEN_INVALID')
    const { failed, error } = await forgetAccount(context, request, account)
    emit(request, { type: 'account.deleted', accountId: account.id, email: account.email, ...(failed.length > 0 ? { leftovers: failed } : {}) })
    outbox.send(request, { type: 'account_deleted', to: account.email, accountId: account.id })
    // The account is gone (so is every way back into it), but not all of it: 503, as for any store failure. A retry
    // finds no account (401); what is left expires by itself.
    if (error !== undefined) throw error
    return await reply.code(204).send()
  })
}
