import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { requestError } from '../../common/errors.js'
import { BODY_ERRORS, jsonResponse, problemResponses, setCookieHeader } from '../../http/openapi.js'
import { LoginMfaOrPasskeyBody } from '../../http/passkey-schemas.js'
import { documentedTokenReply, LoginMfaBody } from '../../http/schemas.js'
import type { Static } from '@sinclair/typebox'
import type { AcceptedPasskey } from '../../passkeys/passkeys.js'
import type { MfaRouteContext } from '../context.js'
import { refuseCode } from '../refusals.js'
import { finishSignIn } from './finish-sign-in.js'
import { PURPOSE } from '../../tokens/purposes.js'

/**
 * POST /LoginMfa: the second step of a Login for an account with two factors on. The challenge (mfaToken)
 * is a one-time token of its own purpose, so no other route takes it; it is used up by the success, and
 * killed by its 5th wrong code. Codes also count on the account's code counter, or a known device's own (SecondFactor).
 */
export function registerLoginMfa (app: FastifyInstance, context: MfaRouteContext): void {
  const { accountService, knownDevices, emit, refreshCookie, refresh, secondFactor, oneTimeTokens, passkeys, trustedDevices } = context

  function invalid (request: FastifyRequest, accountId?: string): Error {
    emit(request, { type: 'mfa.failed', route: 'LoginMfa', reason: 'invalid', accountId })
    return requestError('FST_PWAUTH_MFA_CODE_INVALID')
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/LoginMfa', {
    schema: {
      summary: 'Finish a Login with a second factor',
      description: 'With the mfaToken of the Login answer and a code from the authenticator app (or a recovery code): starts the session.' +
        (trustedDevices === undefined ? '' : ` With rememberDevice: true, this device (its device token) is trusted for ${+(trustedDevices.ttlMs / 86_400_000).toFixed(5)} days (mfa.trustDays): a Login from it with the right password needs no code.`),
      tags: ['Auth'],
      // With passkeys on, one of the account's passkeys may stand instead of the code.
      body: passkeys === undefined ? LoginMfaBody : LoginMfaOrPasskeyBody,
      response: {
        200: jsonResponse('Logged in: an access token and, with refresh on, a refresh token.',
          documentedTokenReply({ refresh, cookie: refreshCookie !== undefined, device: true }), refreshCookie === undefined ? {} : setCookieHeader(refreshCookie, 'set')),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_MFA_CODE_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const { mfaToken, code, passkey, rememberDevice = false } = request.body as Static<typeof LoginMfaOrPasskeyBody>
    const challenge = await oneTimeTokens.find(request, mfaToken, PURPOSE.mfaLogin)
    if (challenge === null) throw invalid(request)
    // Read before anything is checked: an end of every trust from now on (a reset, Disable, EndOthers) outruns this one (contract §21).
    const trustGeneration = rememberDevice && trustedDevices !== undefined ? await trustedDevices.generation(request, challenge.accountId) : undefined
    // A password change or a deactivation since the Login ends the challenge with the account's tokens.
    const account = await accountService.ofToken(request, challenge)
    if (account === null) throw invalid(request, challenge.accountId)

    // A known device of the account is judged on its own code counter: a stranger with the password cannot hold it out.
    const deviceId = (await knownDevices.recognise(request, account.email, account))?.id ?? null
    const counting = { token: mfaToken, deviceId }
    let accepted: AcceptedPasskey | undefined
    // A passkey instead of the code: a refused one counts as a wrong code would (contract §18).
    const check = passkeys !== undefined && passkey !== undefined
      ? await secondFactor.checkWith(request, account.id, async () => {
        const result = await passkeys.verify(request, passkey, 'LoginMfa', 'mfa', account.id)
        if (result.outcome === 'accepted') accepted = result
        return accepted !== undefined
      }, counting)
      : await secondFactor.check(request, account.id, code, counting)
    if (check.outcome !== 'accepted') {
      if (check.outcome === 'spent') await oneTimeTokens.consume(request, mfaToken, PURPOSE.mfaLogin).catch(() => {})
      // Two factors turned off since the Login (`off`) answer as a wrong code would: the challenge asked for one.
      throw refuseCode(context, request, reply, 'LoginMfa', account, check, { afterPassword: true })
    }
    // Of concurrent successes with one challenge, one starts the session.
    if (await oneTimeTokens.consume(request, mfaToken, PURPOSE.mfaLogin) === null) throw invalid(request, account.id)

    const body = await finishSignIn(context, request, reply, {
      account,
      email: account.email,
      deviceId,
      proof: { mfa: true, amr: accepted?.amr === undefined ? undefined : ['pwd', ...accepted.amr] },
      stillStands: async () => await secondFactor.enrolment(request, account.id) === check.enrolment,
      beforeDeviceToken: trustGeneration === undefined
        ? undefined
        : async (tokenDeviceId) => { await trustedDevices!.trust(request, { account, deviceId: tokenDeviceId, enrolment: check.enrolment }, trustGeneration) }
    })
    if (body === null) throw invalid(request, account.id)
    return body
  })
}
