import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { requestError } from '../../common/errors.js'
import { BODY_ERRORS, jsonResponse, problemResponses } from '../../http/openapi.js'
import { LoginMfaOptionsBody, RequestOptionsReply } from '../../http/passkey-schemas.js'
import { PURPOSE } from '../../tokens/purposes.js'
import type { PasskeyRouteContext } from '../context.js'

/** POST /LoginMfa/Options (with two factors and passkeys on): a passkey instead of LoginMfa's code. A JSON body, no argon2. */
export function registerLoginMfaOptions (app: FastifyInstance, context: PasskeyRouteContext): void {
  const { passkeys, oneTimeTokens, accountService } = context

  app.withTypeProvider<TypeBoxTypeProvider>().post('/LoginMfa/Options', {
    schema: {
      summary: 'Options to finish a Login with a passkey instead of a code',
      description: 'With the mfaToken of the Login answer: request options listing the account\'s passkeys.',
      tags: ['Passkeys'],
      body: LoginMfaOptionsBody,
      response: {
        200: jsonResponse('Request options with a new challenge.', RequestOptionsReply),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_MFA_CODE_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request) => {
    const challenge = await oneTimeTokens.find(request, request.body.mfaToken, PURPOSE.mfaLogin)
    const account = challenge === null ? null : await accountService.ofToken(request, challenge)
    if (account === null) throw requestError('FST_PWAUTH_MFA_CODE_INVALID')
    return await passkeys.requestOptions(request, 'mfa', account)
  })
}
