import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { afterNewPassword } from '../../account/new-password.js'
import { requestError } from '../../common/errors.js'
import { BODY_ERRORS, noContentResponse, problemResponses } from '../../http/openapi.js'
import { ResetPasswordBody, withDocumentedNewPassword } from '../../http/schemas.js'
import { validateAs } from '../../http/validation.js'
import type { StoredAccount } from '../../stores/types.js'
import type { RouteContext } from '../context.js'
import type { PasswordResetRoutes } from '../options.js'
import { refuseCode } from '../refusals.js'
import { PURPOSE } from '../../tokens/purposes.js'

/**
 * POST /ResetPassword: every check that can fail comes before the token is used up (a refused password
 * does not burn the link); then one atomic consume (one winner among concurrent uses) and a
 * compare-and-set of the hash that advances the credential version. Every session ends, and every passkey
 * goes unless the host keeps them (passwordReset.keepPasskeys).
 */
export function registerResetPassword (app: FastifyInstance, context: RouteContext, { keepPasskeys }: PasswordResetRoutes): void {
  const { accountService, hasher, policy, emit, oneTimeTokens, secondFactor, passkeys } = context

  /**
   * With two factors on, the code (ASVS V6.4.3: a reset must not bypass them). Its wrong codes count on the
   * token alone, which dies after 5 of them: never on the account's code counter, which a stranger with the
   * password may hold blocked (contract §15), and whose lock only a reset lifts.
   */
  async function checkCode (request: FastifyRequest, reply: FastifyReply, account: StoredAccount, token: string, code: string | undefined): Promise<void> {
    if (secondFactor === undefined) return
    const check = await secondFactor.check(request, account.id, code, { token, tokenOnly: true })
    if (check.outcome === 'accepted' || check.outcome === 'off') return
    if (check.outcome === 'spent') await oneTimeTokens.consume(request, token, PURPOSE.passwordReset).catch(() => {})
    throw refuseCode(context, request, reply, 'ResetPassword', account, check)
  }

  function invalid (request: FastifyRequest, accountId?: string): Error {
    emit(request, { type: 'password.reset_failed', reason: 'invalid_token', accountId })
    return requestError('FST_PWAUTH_RESET_TOKEN_INVALID')
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/ResetPassword', {
    schema: {
      summary: 'Set a new password with the token of a reset link',
      description: 'The token comes from the link of a password_reset message. Success ends every session of the account; it does not log in.',
      tags: ['Auth'],
      body: withDocumentedNewPassword(ResetPasswordBody, policy),
      response: {
        204: noContentResponse('The password is changed and every session of the account has ended.'),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_PASSWORD_MISMATCH', 'FST_PWAUTH_RESET_TOKEN_INVALID', 'FST_PWAUTH_WEAK_PASSWORD',
          'FST_PWAUTH_MFA_CODE_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    },
    validatorCompiler: validateAs(ResetPasswordBody)
  }, async (request, reply) => {
    const { token, newPassword, confirmNewPassword } = request.body
    if (newPassword !== confirmNewPassword) throw requestError('FST_PWAUTH_PASSWORD_MISMATCH')
    const found = await oneTimeTokens.find(request, token, PURPOSE.passwordReset)
    const account = found === null ? null : await accountService.storedOfToken(request, found)
    if (account === null) throw invalid(request, found?.accountId)
    const reasons = await policy.evaluate(newPassword, undefined, account.email, request)
    if (reasons.length > 0) throw requestError('FST_PWAUTH_WEAK_PASSWORD', { reasons })
    await checkCode(request, reply, account, token, request.body.code)

    const newHash = await hasher.hash(newPassword)
    // Whoever needed a reset may not be the only one holding a key (contract §18). Before the token is used
    // up: a store failure answers 503 and leaves the link working.
    if (passkeys !== undefined && !keepPasskeys) await passkeys.removeAll(request, account.id, 'password_reset')
    if (await oneTimeTokens.consume(request, token, PURPOSE.passwordReset) === null) throw invalid(request, account.id)
    if (!await accountService.setPasswordHash(request, account, newHash)) {
      // The password changed since the lookup (a ChangePassword, another system): the token died with it.
      emit(request, { type: 'password.reset_failed', reason: 'conflict', accountId: account.id })
      throw requestError('FST_PWAUTH_RESET_TOKEN_INVALID')
    }
    emit(request, { type: 'password.reset', accountId: account.id, email: account.email })
    await afterNewPassword(context, request, account, { via: 'password_reset', keepPasskeys })
    return await reply.code(204).send()
  })
}
