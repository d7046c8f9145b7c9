import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { requestError } from '../../common/errors.js'
import { authenticate, sessionOf, accountOf } from '../../guard/authenticate.js'
import { BODY_ERRORS, guardedProblemResponses, noContentResponse } from '../../http/openapi.js'
import { ReauthenticateOrPasskeyBody } from '../../http/passkey-schemas.js'
import { ReauthenticateBody } from '../../http/schemas.js'
import type { Static } from '@sinclair/typebox'
import type { RouteContext } from '../context.js'
import { refuseCode, refusePasskey } from '../refusals.js'
import { proveSessionPassword } from './session-password.js'

const MFA_OFF = { outcome: 'off' } as const

/**
 * POST /Reauthenticate: the signed-in user proves the password again before a sensitive action. A
 * password check exactly like Login's (the same per-e-mail throttle, one argon2 verification, one 401),
 * for the token's own account only; success renews the session's authentication time.
 */
export function registerReauthenticate (app: FastifyInstance, context: RouteContext): void {
  const { knownDevices, sessionService, emit, secondFactor, passkeys } = context

  app.withTypeProvider<TypeBoxTypeProvider>().post('/Reauthenticate', {
    onRequest: authenticate,
    schema: {
      summary: 'Prove the password again, for actions that need a recent authentication',
      description: 'Needs the access token. Throttled and answered like Login; with two factors on, a code too (401 FST_PWAUTH_MFA_CODE_INVALID without a valid one). ' +
        'Success renews the session\'s authentication time.',
      tags: ['Auth'],
      security: [{ bearerAuth: [] }],
      // With passkeys on, a passkey's authentication response may stand instead of the password (and code).
      body: passkeys === undefined ? ReauthenticateBody : ReauthenticateOrPasskeyBody,
      response: {
        204: noContentResponse('The session\'s authentication time is now.'),
        ...guardedProblemResponses([...BODY_ERRORS, 'FST_PWAUTH_INVALID_CREDENTIALS', 'FST_PWAUTH_MFA_CODE_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE', 'FST_PWAUTH_PASSWORD_RESET_REQUIRED',
          ...passkeys === undefined ? [] : ['FST_PWAUTH_PASSKEY_INVALID' as const]])
      }
    }
  }, async (request, reply) => {
    const account = accountOf(request)!
    const sessionId = sessionOf(request)!.id
    const { password, passkey } = request.body as Static<typeof ReauthenticateOrPasskeyBody>
    if (passkeys !== undefined && passkey !== undefined) {
      // A passkey with user verification is both factors: the existing session is renewed, none is started.
      const check = await passkeys.verify(request, passkey, 'Reauthenticate', 'reauthenticate', account.id)
      if (check.outcome !== 'accepted') throw refusePasskey()
      if (!await sessionService.reauthenticate(request, sessionId, true, check.amr)) throw requestError('FST_PWAUTH_TOKEN_INVALID')
      emit(request, { type: 'session.reauthenticated', accountId: account.id, sessionId })
      return await reply.code(204).send()
    }
    if (password === undefined) throw requestError('FST_PWAUTH_VALIDATION', { errors: [{ pointer: '/password', detail: 'password (or passkey) is required' }] })
    const device = await knownDevices.recognise(request, account.email, account)
    await proveSessionPassword(context, request, reply, { account, sessionId, password, device, route: 'Reauthenticate' })
    // With two factors on, a code too: this session has then proved both.
    const check = secondFactor === undefined ? MFA_OFF : await secondFactor.check(request, account.id, request.body.code, { deviceId: device?.id ?? null })
    if (check.outcome !== 'off' && check.outcome !== 'accepted') throw refuseCode(context, request, reply, 'Reauthenticate', account, check, { afterPassword: true })
    if (!await sessionService.reauthenticate(request, sessionId, check.outcome === 'accepted')) throw requestError('FST_PWAUTH_TOKEN_INVALID')
    emit(request, { type: 'session.reauthenticated', accountId: account.id, sessionId })
    return await reply.code(204).send()
  })
}
