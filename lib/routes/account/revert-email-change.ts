import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { afterNewPassword } from '../../account/new-password.js'
import type { EmailChangeRoutes } from '../../account/options.js'
import { tellSecondFactorOff } from '../../account/second-factor-off.js'
import { requestError } from '../../common/errors.js'
import { BODY_ERRORS, noContentResponse, problemResponses } from '../../http/openapi.js'
import { RevertEmailChangeBody, withDocumentedNewPassword } from '../../http/schemas.js'
import { validateAs } from '../../http/validation.js'
import { removeSecondFactor } from '../../mfa/remove-second-factor.js'
import type { StoredAccount } from '../../stores/types.js'
import type { RouteContext } from '../context.js'
import { PURPOSE } from '../../tokens/purposes.js'

/**
 * POST /RevertEmailChange: for whoever lost the account through a change they did not make. The link went to the
 * old address, so it is bound to the account alone: a later change of address or password (the taker's) does not
 * outrun it. But links stand together: of an account's revert links (one per address it left) only the earliest
 * issued live one works, and using it ends every other, atomically (consumeFirst). A taker who moved the account on
 * (A → T1 → T2) holds a link of his own at T1: it can neither go before the owner's nor outlive it.
 *
 * Restores the address (unless another account holds it), sets the new password (the credential version advances, so
 * every token dies), ends every session, removes every passkey, and turns two factors off as an admin's
 * resetSecondFactor does (secret, recovery codes, trusted devices; mfa_disabled to the restored address): a taker who
 * enrolled or re-enrolled them would otherwise hold the owner out with their own codes. A revert that fails after
 * the link was used gives it back, for the owner's next try.
 */
export function registerRevertEmailChange (app: FastifyInstance, context: RouteContext, { revertTtlMs }: EmailChangeRoutes): void {
  const { accountService, hasher, policy, emit, oneTimeTokens, passkeys, secondFactor, trustedDevices } = context

  function invalid (request: FastifyRequest, reason: 'invalid_token' | 'conflict' | 'taken', accountId?: string): Error {
    emit(request, { type: 'account.email_change_failed', route: 'RevertEmailChange', reason, accountId })
    return requestError('FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID')
  }

  /**
   * The old address back (unless another account took it), then the new password: the account service's retry rule
   * on a racing password change, never on an account that moved meanwhile.
   */
  async function restore (request: FastifyRequest, account: StoredAccount, oldEmail: string, newHash: string): Promise<'restored' | 'taken' | 'conflict'> {
    if (account.email !== oldEmail && !await accountService.moveEmail(request, {
      id: account.id, expectedEmail: account.email, expectedCredentialVersion: account.credentialVersion, newEmail: oldEmail
    })) return 'taken'
    return await accountService.replacePasswordHash(request, account, () => newHash, (current) => current.email === oldEmail) === 'replaced' ? 'restored' : 'conflict'
  }

  /** What a taker may have added goes: passkeys, two factors (each removal may run again). */
  async function removeWhatATakerAdded (request: FastifyRequest, accountId: string, oldEmail: string): Promise<void> {
    await passkeys?.removeAll(request, accountId)
    if (secondFactor !== undefined && await removeSecondFactor({ secondFactor, trustedDevices }, request, accountId)) tellSecondFactorOff(context, request, accountId, oldEmail)
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/RevertEmailChange', {
    schema: {
      summary: 'Undo a change of address you did not make, and set a new password',
      description: 'The token comes from the email_changed message the old address got. Every session ends, every passkey is removed and two factors are turned off; ' +
        'every other revert link of the account and every pending change end. While an earlier revert link of the account lives, only that one works. It does not log in.',
      tags: ['Account'],
      body: withDocumentedNewPassword(RevertEmailChangeBody, policy),
      response: {
        204: noContentResponse('The account has its old address back and the new password.'),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_PASSWORD_MISMATCH', 'FST_PWAUTH_WEAK_PASSWORD', 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID',
          'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    },
    validatorCompiler: validateAs(RevertEmailChangeBody)
  }, async (request, reply) => {
    const { token, newPassword, confirmNewPassword } = request.body
    if (newPassword !== confirmNewPassword) throw requestError('FST_PWAUTH_PASSWORD_MISMATCH')
    const found = await oneTimeTokens.find(request, token, PURPOSE.emailRevert)
    const oldEmail = found?.fields?.oldEmail
    if (found === null || typeof oldEmail !== 'string') throw invalid(request, 'invalid_token')
    const reasons = await policy.evaluate(newPassword, undefined, oldEmail, request)
    if (reasons.length > 0) throw requestError('FST_PWAUTH_WEAK_PASSWORD', { reasons })
    const account = await accountService.stored(request, found.accountId)
    if (account === null) throw invalid(request, 'invalid_token', found.accountId)
    const takenEmail = account.email
    // Refused before anything changes: an old address another account holds now is not taken from it.
    if (takenEmail !== oldEmail && await accountService.findByEmail(request, oldEmail) !== null) {
      throw invalid(request, 'taken', account.id)
    }
    const newHash = await hasher.hash(newPassword)
    // The link is used up first (with every other revert link of the account): a later link, refused while the
    // owner's earlier one lives, changes nothing.
    const consumed = await oneTimeTokens.consumeFirst(request, token, PURPOSE.emailRevert)
    if (consumed === null) throw invalid(request, 'invalid_token', account.id)
    let outcome: Awaited<ReturnType<typeof restore>> | undefined
    try {
      await removeWhatATakerAdded(request, found.accountId, oldEmail)
      outcome = await restore(request, account, oldEmail, newHash)
    } finally {
      // A revert that did not make the password the owner's (a store failing, the address taken or the account changed
      // meanwhile) gives the link back, with its own expiry, for the owner's next try. No other link can come back.
      const expiresAt = consumed.fields?.expiresAt
      if (outcome !== 'restored' && typeof expiresAt === 'number') await oneTimeTokens.putBack(request, token, consumed, expiresAt).catch(() => {})
    }
    if (outcome !== 'restored') throw invalid(request, outcome, found.accountId)
    emit(request, { type: 'account.email_reverted', accountId: found.accountId, email: oldEmail, previousEmail: takenEmail })
    await afterNewPassword(context, request, { id: found.accountId, email: oldEmail }, { via: 'email_reverted' })
    // The taker's address is one the account left: a deletion within revertTtl is told there too.
    if (takenEmail !== oldEmail) await oneTimeTokens.note(request, PURPOSE.emailLeft, found.accountId, takenEmail, revertTtlMs)
    return await reply.code(204).send()
  })
}
