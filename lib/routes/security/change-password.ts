import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { afterNewPassword } from '../../account/new-password.js'
import { normalizeEmail } from '../../stores/email.js'
import { requestError } from '../../common/errors.js'
import { BODY_ERRORS, noContentResponse, problemResponses } from '../../http/openapi.js'
import { ChangePasswordBody, withDocumentedNewPassword } from '../../http/schemas.js'
import { validateAs } from '../../http/validation.js'
import type { RouteContext } from '../context.js'
import { refuseCode, refusePassword, refuseResetRequired } from '../refusals.js'

export function registerChangePassword (app: FastifyInstance, context: RouteContext): void {
  const { accountService, hasher, policy, checkPassword, knownDevices, emit, secondFactor } = context

  app.withTypeProvider<TypeBoxTypeProvider>().post('/ChangePassword', {
    schema: {
      summary: 'Change the account password',
      description: 'Authenticated by e-mail address and current password (no bearer token); with two factors on, a code too. ' +
        'Every token issued before the change stops working and every session of the account ends.',
      tags: ['Auth'],
      body: withDocumentedNewPassword(ChangePasswordBody, policy),
      response: {
        204: noContentResponse('Changed: every earlier token and session of the account has ended.'),
        ...problemResponses([
          ...BODY_ERRORS, 'FST_PWAUTH_PASSWORD_MISMATCH', 'FST_PWAUTH_WEAK_PASSWORD', 'FST_PWAUTH_INVALID_CREDENTIALS', 'FST_PWAUTH_TOO_MANY_ATTEMPTS',
          ...secondFactor === undefined ? [] : ['FST_PWAUTH_MFA_CODE_INVALID' as const], 'FST_PWAUTH_UNAVAILABLE', 'FST_PWAUTH_PASSWORD_RESET_REQUIRED'
        ])
      }
    },
    // The documented body shows the policy's lengths; the input rules alone are validated here.
    validatorCompiler: validateAs(ChangePasswordBody)
  }, async (request, reply) => {
    const { currentPassword, newPassword, confirmNewPassword } = request.body
    if (newPassword !== confirmNewPassword) throw requestError('FST_PWAUTH_PASSWORD_MISMATCH')
    const email = normalizeEmail(request.body.email)
    const reasons = await policy.evaluate(newPassword, currentPassword, email, request)
    if (reasons.length > 0) throw requestError('FST_PWAUTH_WEAK_PASSWORD', { reasons })

    const { device, account: read } = await knownDevices.recogniseReading(request, email)
    const result = await checkPassword(request, email, currentPassword, device, read)
    // A breached current password proves nothing: only a reset by e-mail replaces it (contract §20).
    if (result.outcome === 'reset_required') throw refuseResetRequired(context, request, reply, 'ChangePassword', result.account, result.reason)
    if (result.outcome !== 'accepted') {
      emit(request, result.outcome === 'throttled'
        ? { type: 'password.change_failed', reason: 'throttled', email, device: result.device }
        : { type: 'password.change_failed', reason: result.reason, accountId: result.account?.id, email })
      throw refusePassword(result)
    }

    const { account } = result
    // With two factors on, the password alone changes nothing (contract §4): a thief who has it can neither
    // set his own nor end the owner's sessions. After the password, so only its owner's failures count.
    if (secondFactor !== undefined) {
      const check = await secondFactor.check(request, account.id, request.body.code, { deviceId: device?.id ?? null })
      if (check.outcome !== 'off' && check.outcome !== 'accepted') throw refuseCode(context, request, reply, 'ChangePassword', account, check, { afterPassword: true })
    }
    const newHash = await hasher.hash(newPassword)
    if (!await accountService.setPasswordHash(request, account, newHash)) {
      emit(request, { type: 'password.change_failed', reason: 'conflict', accountId: account.id, email })
      throw requestError('FST_PWAUTH_INVALID_CREDENTIALS')
    }
    emit(request, { type: 'password.changed', accountId: account.id, email })
    await afterNewPassword(context, request, account, { via: 'password_changed' })
    return await reply.code(204).send(null)
  })
}
