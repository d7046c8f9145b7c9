import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { requestError } from '../common/errors.js'
import { BODY_ERRORS, noContentResponse, problemResponses } from '../http/openapi.js'
import { RevertEmailChangeBody, withDocumentedNewPassword } from '../http/schemas.js'
import { validateAs } from '../http/validation.js'
import { removeSecondFactor } from '../mfa/remove-second-factor.js'
import type { StoredAccount } from '../stores/types.js'
import { EMAIL_CHANGE, EMAIL_REVERT } from './change-email.js'
import type { RouteContext } from './context.js'

/** A password change racing the revert is retried on the fresh hash this often. */
const CAS_TRIES = 3

/**
 * POST /RevertEmailChange: for whoever lost the account through a change they did not make. The link went to the
 * old address, so it is bound to the account alone: a later change of address or password (the taker's) does not
 * outrun it. Restores the address (unless another account holds it), sets the new password (the credential
 * version advances, so every token dies), ends every session, removes every passkey, and turns two factors off as
 * an admin's resetSecondFactor does (secret, recovery codes, trusted devices; mfa_disabled to the restored address):
 * a taker who enrolled or re-enrolled them would otherwise hold the owner out with their own codes. Works once.
 */
export function registerRevertEmailChange (app: FastifyInstance, context: RouteContext): void {
  const { accounts, hasher, policy, storeCall, emit, outbox, oneTimeTokens, sessionService, throttle, passkeys, secondFactor, trustedDevices } = context

  function invalid (request: FastifyRequest, reason: 'invalid_token' | 'conflict' | 'taken', accountId?: string): Error {
    emit(request, { type: 'account.email_change_failed', route: 'RevertEmailChange', reason, accountId })
    return requestError('FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID')
  }

  async function storedAccount (request: FastifyRequest, id: string): Promise<StoredAccount | null> {
    const account = await storeCall(request.log, 'accounts.findById', () => accounts.findById(id))
    if (account === null) return null
    const stored = await storeCall(request.log, 'accounts.findByEmail', () => accounts.findByEmail(account.email))
    return stored?.id === id ? stored : null
  }

  /** The old address back (unless another account took it), then the new password (compare-and-set, retried on a racing change). */
  async function restore (request: FastifyRequest, account: StoredAccount, oldEmail: string, newHash: string): Promise<'restored' | 'taken' | 'conflict'> {
    const { id } = account
    if (account.email !== oldEmail) {
      const restored = await storeCall(request.log, 'accounts.updateEmail', async () => await accounts.updateEmail!({
        id, expectedEmail: account.email, expectedCredentialVersion: account.credentialVersion, newEmail: oldEmail
      }))
      if (!restored) return 'taken'
    }
    let current: StoredAccount | null = account
    for (let tries = 0; current !== null && tries < CAS_TRIES; tries++) {
      if (tries > 0) current = await storedAccount(request, id)
      if (current === null) break
      const expectedHash = current.passwordHash
      if (await storeCall(request.log, 'accounts.updatePasswordHash', () => accounts.updatePasswordHash({ id, expectedHash, newHash, advanceCredentialVersion: true }))) return 'restored'
    }
    return 'conflict'
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/RevertEmailChange', {
    schema: {
      summary: 'Undo a change of address you did not make, and set a new password',
      description: 'The token comes from the email_changed message the old address got. Every session ends, every passkey is removed and two factors are turned off; it does not log in.',
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
    const found = await oneTimeTokens.find(request, token, EMAIL_REVERT)
    const oldEmail = found?.fields?.oldEmail
    if (found === null || typeof oldEmail !== 'string') throw invalid(request, 'invalid_token')
    const reasons = await policy.evaluate(newPassword, undefined, oldEmail, request)
    if (reasons.length > 0) throw requestError('FST_PWAUTH_WEAK_PASSWORD', { reasons })
    const account = await storedAccount(request, found.accountId)
    if (account === null) throw invalid(request, 'invalid_token', found.accountId)
    const takenEmail = account.email
    // Refused before anything changes: an old address another account holds now is not taken from it.
    if (takenEmail !== oldEmail && await storeCall(request.log, 'accounts.findByEmail', () => accounts.findByEmail(oldEmail)) !== null) {
      throw invalid(request, 'taken', account.id)
    }
    const newHash = await hasher.hash(newPassword)
    // What a taker may have added goes before the link is used up: each removal may run again, so a store failing
    // here answers 503 and leaves the link working for the owner's next try.
    await passkeys?.removeAll(request, found.accountId)
    if (secondFactor !== undefined && await removeSecondFactor({ secondFactor, trustedDevices }, request, found.accountId)) {
      emit(request, { type: 'mfa.disabled', accountId: found.accountId })
      outbox.send(request, { type: 'mfa_disabled', to: oldEmail, accountId: found.accountId })
    }
    const consumed = await oneTimeTokens.consume(request, token, EMAIL_REVERT)
    if (consumed === null) throw invalid(request, 'invalid_token', account.id)
    let outcome: Awaited<ReturnType<typeof restore>>
    try {
      outcome = await restore(request, account, oldEmail, newHash)
    } catch (err) {
      // A store failing before the password is the owner's gives the link back, for the owner's next try.
      const expiresAt = consumed.fields?.expiresAt
      if (typeof expiresAt === 'number') await oneTimeTokens.putBack(request, token, consumed, expiresAt).catch(() => {})
      throw err
    }
    if (outcome !== 'restored') throw invalid(request, outcome, found.accountId)
    emit(request, { type: 'account.email_reverted', accountId: found.accountId, email: oldEmail, previousEmail: takenEmail })
    await sessionService.endAll(request, found.accountId, 'email_changed')
    // Again now that no earlier token works: one a taker registered since the first removal goes too (contract §18).
    await passkeys?.removeAll(request, found.accountId)
    // Whatever the taker had pending (a change, a reset link) dies; the owner's address is unblocked.
    await oneTimeTokens.forget(request, found.accountId, [EMAIL_CHANGE, 'password_reset'])
    await throttle.forget(request, oldEmail).catch(() => {})
    outbox.send(request, { type: 'password_changed', to: oldEmail, accountId: found.accountId })
    return await reply.code(204).send()
  })
}
