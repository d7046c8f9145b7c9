import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { requestError } from '../common/errors.js'
import { accountOf, authenticate, requireRecentAuthentication, sessionOf } from '../guard/authenticate.js'
import { authenticateResponses, BODY_ERRORS, jsonResponse, noContentResponse, problemResponses, recentAuthenticationResponses } from '../http/openapi.js'
import { AnyCodeBody, TotpCodeBody } from '../http/schemas.js'
import type { MfaRouteContext } from './context.js'
import { refuseCode } from './refusals.js'

const RecoveryCodesReply = Type.Object({
  recoveryCodes: Type.Array(Type.String(), { description: 'Ten codes, each usable once instead of a TOTP code. Shown this once: keep them somewhere safe.' })
})

const CODE_ERRORS = [...BODY_ERRORS, 'FST_PWAUTH_MFA_CODE_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS'] as const

/** Route options of a set-up route: the guard and a recent authentication, documented. */
function guarded<Schema extends { body?: TSchema, response: Record<number, unknown> }> (reauthMaxAge: number, summary: string, description: string, schema: Schema) {
  return {
    onRequest: [authenticate, requireRecentAuthentication(reauthMaxAge)],
    schema: {
      summary,
      description: `${description} Needs the access token and a password proof within the last ${reauthMaxAge} s (Reauthenticate).`,
      tags: ['Two factors'],
      security: [{ bearerAuth: [] }],
      ...schema,
      response: { ...schema.response, ...recentAuthenticationResponses() }
    }
  }
}

/** GET /Mfa and POST /Mfa/Setup: no body, so they live with the routes that ignore theirs. */
export function registerMfaSetup (app: FastifyInstance, { secondFactor, reauthMaxAge }: MfaRouteContext): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/Mfa', {
    onRequest: authenticate,
    schema: {
      summary: 'Whether two factors are on',
      tags: ['Two factors'],
      security: [{ bearerAuth: [] }],
      response: {
        200: jsonResponse('The account\'s two factors.', Type.Object({
          enabled: Type.Boolean(),
          recoveryCodesLeft: Type.Integer({ description: 'Unused recovery codes (0 while off).' })
        })),
        ...authenticateResponses()
      }
    }
  }, async (request) => await secondFactor.status(request, accountOf(request)!.id))

  app.withTypeProvider<TypeBoxTypeProvider>().post('/Mfa/Setup', guarded(reauthMaxAge, 'Start setting up two factors',
    'A new TOTP secret and its otpauth URI (show it as a QR code). Two factors are not on until Confirm. The body is ignored.', {
      response: {
        200: jsonResponse('The secret for the authenticator app.', Type.Object({
          secret: Type.String({ description: 'Base32, 160 bits.' }),
          otpauthUrl: Type.String({ description: 'otpauth://totp/<issuer>:<email>?secret=…&issuer=…' })
        })),
        ...problemResponses(['FST_PWAUTH_MFA_STATE'])
      }
    }), async (request) => {
    const setup = await secondFactor.setup(request, accountOf(request)!)
    if (setup === null) throw requestError('FST_PWAUTH_MFA_STATE')
    return setup
  })
}

/** POST /Mfa/Confirm, /Mfa/RecoveryCodes and /Mfa/Disable: a code in a JSON body. */
export function registerMfaRoutes (app: FastifyInstance, context: MfaRouteContext): void {
  const { secondFactor, sessionService, outbox, emit, reauthMaxAge } = context
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()

  routes.post('/Mfa/Confirm', guarded(reauthMaxAge, 'Turn two factors on', 'With a current code for the secret of Setup. Every other session ends.', {
    body: TotpCodeBody,
    response: { 200: jsonResponse('Two factors are on.', RecoveryCodesReply), ...problemResponses([...CODE_ERRORS, 'FST_PWAUTH_MFA_STATE']) }
  }), async (request) => {
    const account = accountOf(request)!
    const result = await secondFactor.confirm(request, account.id, request.body.code)
    if (result.outcome === 'no_setup') throw requestError('FST_PWAUTH_MFA_STATE')
    if (result.outcome !== 'accepted') throw refuseCode(emit, request, 'Mfa/Confirm', account.id, result)
    const sessionId = sessionOf(request)!.id
    emit(request, { type: 'mfa.enabled', accountId: account.id })
    // This session proved the code; the others proved only a password.
    await sessionService.reauthenticate(request, sessionId, true)
    await sessionService.endOthers(request, account.id, sessionId, 'mfa_changed')
    outbox.send(request, { type: 'mfa_enabled', to: account.email, accountId: account.id })
    return { recoveryCodes: result.recoveryCodes }
  })

  routes.post('/Mfa/RecoveryCodes', guarded(reauthMaxAge, 'Replace the recovery codes', 'With a current TOTP code; the old recovery codes stop working.', {
    body: TotpCodeBody,
    response: { 200: jsonResponse('The new recovery codes.', RecoveryCodesReply), ...problemResponses(CODE_ERRORS) }
  }), async (request) => {
    const account = accountOf(request)!
    const check = await secondFactor.check(request, account.id, request.body.code, { recovery: false })
    if (check.outcome !== 'accepted') throw refuseCode(emit, request, 'Mfa/RecoveryCodes', account.id, check)
    const codes = await secondFactor.replaceRecoveryCodes(request, account.id)
    if (codes === null) throw requestError('FST_PWAUTH_MFA_CODE_INVALID')
    emit(request, { type: 'mfa.recovery_codes_replaced', accountId: account.id })
    return { recoveryCodes: codes }
  })

  routes.post('/Mfa/Disable', guarded(reauthMaxAge, 'Turn two factors off', 'With a TOTP code or a recovery code. Every other session ends.', {
    body: AnyCodeBody,
    response: { 204: noContentResponse('Two factors are off.'), ...problemResponses(CODE_ERRORS) }
  }), async (request, reply) => {
    const account = accountOf(request)!
    const check = await secondFactor.check(request, account.id, request.body.code)
    if (check.outcome !== 'accepted') throw refuseCode(emit, request, 'Mfa/Disable', account.id, check)
    if (await secondFactor.disable(request, account.id)) {
      emit(request, { type: 'mfa.disabled', accountId: account.id })
      await sessionService.endOthers(request, account.id, sessionOf(request)!.id, 'mfa_changed')
      outbox.send(request, { type: 'mfa_disabled', to: account.email, accountId: account.id })
    }
    return await reply.code(204).send()
  })
}
