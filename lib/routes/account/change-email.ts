import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { maskEmail } from '../../account/mask-email.js'
import type { EmailChangeRoutes } from '../../account/options.js'
import { requestError } from '../../common/errors.js'
import { accountOf, authenticate, sessionOf } from '../../guard/authenticate.js'
import { BODY_ERRORS, guardedProblemResponses, noContentResponse, problemResponses } from '../../http/openapi.js'
import { ChangeEmailBody, VerifyEmailChangeBody } from '../../http/schemas.js'
import { normalizeEmail } from '../../stores/email.js'
import { PURPOSE } from '../../tokens/purposes.js'
import type { RouteContext } from '../context.js'
import { requireSecondFactorSession } from '../security/second-factor-session.js'
import { proveSessionPassword } from '../security/session-password.js'

/**
 * POST /ChangeEmail (guarded, the password, a session that passed two factors when they are on): one 202 in one
 * time for a free, taken, pending or own address. The password stands for a recent authentication (a token taken
 * by script in the page cannot move the account). Before the answer only what is the same for every address runs:
 * the lookup of the new address and the end of the pending change, whatever this one names (an older link that
 * still worked after a request for a taken address would tell that the address has an account). What differs (a
 * link to a free address, account_exists to a taken one, nothing for the own one, the masked notice to the old one)
 * happens after it. Nothing changes yet.
 */
export function registerChangeEmail (app: FastifyInstance, context: RouteContext, { verifyTtlMs }: EmailChangeRoutes): void {
  const { accountService, emit, outbox, mailLimit, oneTimeTokens, knownDevices } = context

  app.withTypeProvider<TypeBoxTypeProvider>().post('/ChangeEmail', {
    onRequest: authenticate,
    schema: {
      summary: 'Ask to move the account to a new e-mail address',
      description: 'With the password (it stands for a recent authentication: no Reauthenticate is needed), and with two factors on a session that passed them. ' +
        'Answers 202 whatever the address: a free one gets an email_change link, a taken one account_exists, and the current address email_change_requested. ' +
        'A pending change ends, whatever address this one names.',
      tags: ['Account'],
      security: [{ bearerAuth: [] }],
      body: ChangeEmailBody,
      response: {
        202: noContentResponse('Accepted: nothing changes until the link sent to the new address is used.'),
        ...guardedProblemResponses([...BODY_ERRORS, 'FST_PWAUTH_MFA_REQUIRED', 'FST_PWAUTH_INVALID_CREDENTIALS', 'FST_PWAUTH_TOO_MANY_ATTEMPTS',
          'FST_PWAUTH_PASSWORD_RESET_REQUIRED', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const account = accountOf(request)!
    const sessionId = sessionOf(request)!.id
    await requireSecondFactorSession(context, request, account.id)
    const device = await knownDevices.recognise(request, account.email, account)
    await proveSessionPassword(context, request, reply, { account, sessionId, password: request.body.password, device, route: 'ChangeEmail' })
    const newEmail = normalizeEmail(request.body.newEmail)
    const holder = await accountService.findByEmail(request, newEmail)
    await oneTimeTokens.forget(request, account.id, [PURPOSE.emailChange])
    outbox.afterResponse(reply, async () => {
      const report = (outcome: 'sent' | 'account_exists' | 'own_address' | 'limited'): void => {
        emit(request, { type: 'account.email_change_requested', accountId: account.id, email: account.email, outcome })
      }
      if (holder?.id === account.id || newEmail === account.email) return report('own_address')
      if (!await mailLimit.take(request, newEmail, holder === null ? 'email_change' : 'account_exists')) return report('limited')
      if (holder !== null) {
        outbox.send(request, { type: 'account_exists', to: newEmail, accountId: holder.id })
      } else {
        const token = await oneTimeTokens.issue(request, PURPOSE.emailChange, account, verifyTtlMs, { fields: { newEmail, sessionId } })
        outbox.send(request, { type: 'email_change', to: newEmail, token, expiresAt: Date.now() + verifyTtlMs, accountId: account.id })
      }
      if (await mailLimit.take(request, account.email, 'email_change_requested')) {
        outbox.send(request, { type: 'email_change_requested', to: account.email, newEmail: maskEmail(newEmail), accountId: account.id })
      }
      report(holder === null ? 'sent' : 'account_exists')
    })
    return await reply.code(202).send()
  })
}

/**
 * POST /VerifyEmailChange: a live token moves the account, with a compare-and-set on the address and credential
 * version it was issued for (a password or address change since outruns it; of concurrent uses one wins). Every
 * other session ends, the account's reset and change tokens die, the old address gets a revert link, and is noted
 * as one the account left (the deletion notice goes there too for revertTtl).
 */
export function registerVerifyEmailChange (app: FastifyInstance, context: RouteContext, { revertTtlMs }: EmailChangeRoutes): void {
  const { accountService, emit, outbox, oneTimeTokens, sessionService } = context

  function invalid (request: FastifyRequest, reason: 'invalid_token' | 'conflict' | 'taken', accountId?: string): Error {
    emit(request, { type: 'account.email_change_failed', route: 'VerifyEmailChange', reason, accountId })
    return requestError('FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID')
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/VerifyEmailChange', {
    schema: {
      summary: 'Move the account to the new address, with the token sent there',
      description: 'Every other session of the account ends; the old address gets email_changed with a link that undoes the change. Every failure is one 400.',
      tags: ['Account'],
      body: VerifyEmailChangeBody,
      response: {
        204: noContentResponse('The account has its new address.'),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_EMAIL_CHANGE_TOKEN_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const { token } = request.body
    const found = await oneTimeTokens.find(request, token, PURPOSE.emailChange)
    const newEmail = found?.fields?.newEmail
    if (found === null || typeof newEmail !== 'string') throw invalid(request, 'invalid_token')
    const account = await accountService.ofToken(request, found, { boundToAddress: true })
    if (account === null) throw invalid(request, 'conflict', found.accountId)
    if (await oneTimeTokens.consume(request, token, PURPOSE.emailChange) === null) throw invalid(request, 'invalid_token', account.id)
    const moved = await accountService.moveEmail(request, { id: account.id, expectedEmail: found.email, expectedCredentialVersion: found.credentialVersion, newEmail })
    if (!moved) {
      const holder = await accountService.findByEmail(request, newEmail)
      throw invalid(request, holder !== null && holder.id !== account.id ? 'taken' : 'conflict', account.id)
    }
    emit(request, { type: 'account.email_changed', accountId: account.id, email: newEmail, previousEmail: account.email })
    const { sessionId } = found.fields as { sessionId?: unknown }
    await sessionService.endOthers(request, account.id, typeof sessionId === 'string' ? sessionId : '', 'email_changed')
    // A reset link went to the old address: it dies with the change (its e-mail no longer matches), and goes anyway.
    await oneTimeTokens.forget(request, account.id, [PURPOSE.passwordReset])
    // One revert slot per address left: a second change cannot replace the first owner's way back.
    const expiresAt = Date.now() + revertTtlMs
    const revert = await oneTimeTokens.issue(request, PURPOSE.emailRevert, { ...account, email: newEmail }, revertTtlMs, { subject: account.email, fields: { oldEmail: account.email, expiresAt } })
    outbox.send(request, { type: 'email_changed', to: account.email, token: revert, expiresAt, accountId: account.id, newEmail: maskEmail(newEmail) })
    await oneTimeTokens.note(request, PURPOSE.emailLeft, account.id, account.email, revertTtlMs)
    return await reply.code(204).send()
  })
}
