import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { requestError } from '../../common/errors.js'
import { accountOf, authenticate, sessionOf } from '../../guard/authenticate.js'
import type { PasswordAuthError, RequestErrorCode } from '../../common/errors.js'
import { authenticateResponses, BODY_ERRORS, guardedProblemResponses, jsonResponse, noContentResponse } from '../../http/openapi.js'
import { ConfirmMfaBody, DisableMfaBody, RecoveryCodesBody } from '../../http/schemas.js'
import type { MfaRouteContext } from '../context.js'
import { refuseCode } from '../refusals.js'
import { proveSessionPassword } from './session-password.js'

export const RecoveryCodesReply = Type.Object({
  recoveryCodes: Type.Array(Type.String(), { description: 'Ten codes, each usable once instead of a TOTP code. Shown this once: keep them somewhere safe.' })
})

export const MfaStatusReply = Type.Object({
  enabled: Type.Boolean(),
  recoveryCodesLeft: Type.Integer({ description: 'Unused recovery codes (0 while off).' })
})

export const MfaSetupReply = Type.Object({
  secret: Type.String({ description: 'Base32, 160 bits.' }),
  otpauthUrl: Type.String({ description: '`otpauth://totp/<issuer>:<email>?secret=…&issuer=…`' })
})

/** Confirm, Disable and RecoveryCodes: the state first, then the password, then the code; argon2 runs, so a full hashing queue sheds them. */
const SWITCH_ERRORS = [...BODY_ERRORS, 'FST_PWAUTH_MFA_CODE_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_MFA_STATE', 'FST_PWAUTH_INVALID_CREDENTIALS',
  'FST_PWAUTH_UNAVAILABLE', 'FST_PWAUTH_PASSWORD_RESET_REQUIRED'] as const

/** The 409 of a set-up route in the wrong state, saying which: its detail is the one thing that differs. */
const STATE_DETAILS = {
  on: 'Two factors are already on: turn them off before setting them up again.',
  no_setup: 'There is no set-up waiting for its code: start with Mfa/Setup.',
  off: 'Two factors are not on.'
} as const

function wrongState (state: keyof typeof STATE_DETAILS): PasswordAuthError {
  return requestError('FST_PWAUTH_MFA_STATE', undefined, STATE_DETAILS[state])
}

/** Route options of a set-up route: the guard, documented with the route's `ok` responses and its `errors` beside the guard's. */
function guarded<Body extends TSchema | undefined = undefined> (summary: string, description: string,
  { body, ok, errors }: { body?: Body, ok: Record<number, unknown>, errors: readonly RequestErrorCode[] }) {
  return {
    onRequest: [authenticate],
    schema: {
      summary,
      description: `${description} Needs the access token.`,
      tags: ['Two factors'],
      security: [{ bearerAuth: [] }],
      // No body key at all without a body: Fastify warns of a POST route whose body schema is undefined.
      ...(body === undefined ? {} : { body }) as { body: Body },
      response: { ...ok, ...guardedProblemResponses(errors) }
    }
  }
}

/**
 * GET /Mfa and POST /Mfa/Setup: no body, so they live with the routes that ignore theirs. Setup changes
 * nothing until Confirm, so it needs no recent authentication (contract §15).
 */
export function registerMfaSetup (app: FastifyInstance, { secondFactor }: MfaRouteContext): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/Mfa', {
    onRequest: authenticate,
    schema: {
      summary: 'Whether two factors are on',
      tags: ['Two factors'],
      security: [{ bearerAuth: [] }],
      response: {
        200: jsonResponse('The account\'s two factors.', MfaStatusReply),
        ...authenticateResponses()
      }
    }
  }, async (request) => await secondFactor.status(request, accountOf(request)!.id))

  app.withTypeProvider<TypeBoxTypeProvider>().post('/Mfa/Setup', guarded('Start setting up two factors',
    'A new TOTP secret and its otpauth URI (show it as a QR code). Two factors are not on until Confirm. The body is ignored.', {
      ok: {
        200: jsonResponse('The secret for the authenticator app.', MfaSetupReply)
      },
      errors: ['FST_PWAUTH_MFA_STATE']
    }), async (request) => {
    const setup = await secondFactor.setup(request, accountOf(request)!)
    if (setup === null) throw wrongState('on')
    return setup
  })
}

/**
 * POST /Mfa/Confirm, /Mfa/Disable and /Mfa/RecoveryCodes: the password too, which stands for the recent
 * authentication (a token taken by script in the page can neither enrol a stranger's authenticator, nor remove
 * the owner's, nor read new recovery codes), so they run argon2 and live with Login. The state is checked first
 * (409, before the password or the code is looked at), then the password (Login's 401, counted on its
 * counters), then the code. Either switch ends every other session of the account; a Login racing it ends its
 * own (routes/login.ts, routes/login-mfa.ts).
 */
export function registerMfaSwitches (app: FastifyInstance, context: MfaRouteContext): void {
  const { secondFactor, sessionService, knownDevices, outbox, emit, trustedDevices } = context
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  const passwordNote = ' The password stands for a recent authentication: no Reauthenticate is needed.'

  routes.post('/Mfa/Confirm', guarded('Turn two factors on', `With the password and a current code for the secret of Setup. Every other session ends.${passwordNote}`, {
    body: ConfirmMfaBody,
    ok: { 200: jsonResponse('Two factors are on.', RecoveryCodesReply) },
    errors: SWITCH_ERRORS
  }), async (request, reply) => {
    const account = accountOf(request)!
    const sessionId = sessionOf(request)!.id
    const state = await secondFactor.state(request, account.id)
    if (state !== 'pending') throw wrongState(state === 'on' ? 'on' : 'no_setup')
    const device = await knownDevices.recognise(request, account.email, account)
    await proveSessionPassword(context, request, reply, { account, sessionId, password: request.body.password, device, route: 'Mfa/Confirm' })
    const result = await secondFactor.confirm(request, account.id, request.body.code, { deviceId: device?.id ?? null })
    if (result.outcome === 'no_setup') throw wrongState('no_setup')
    if (result.outcome !== 'accepted') throw refuseCode(context, request, reply, 'Mfa/Confirm', account, result)
    emit(request, { type: 'mfa.enabled', accountId: account.id })
    // A new enrolment already ends every earlier trust; ending them empties the owner's list.
    await trustedDevices?.endAll(request, account.id, 'mfa_changed')
    // This session proved the password and the code; the others proved only a password.
    await sessionService.reauthenticate(request, sessionId, true)
    await sessionService.endOthers(request, account.id, sessionId, 'mfa_changed')
    outbox.send(request, { type: 'mfa_enabled', to: account.email, accountId: account.id })
    return { recoveryCodes: result.recoveryCodes }
  })

  routes.post('/Mfa/Disable', guarded('Turn two factors off', `With the password and a TOTP code or a recovery code. Every other session ends.${passwordNote}`, {
    body: DisableMfaBody,
    ok: { 204: noContentResponse('Two factors are off.') },
    errors: SWITCH_ERRORS
  }), async (request, reply) => {
    const account = accountOf(request)!
    const sessionId = sessionOf(request)!.id
    if (await secondFactor.state(request, account.id) !== 'on') throw wrongState('off')
    const device = await knownDevices.recognise(request, account.email, account)
    await proveSessionPassword(context, request, reply, { account, sessionId, password: request.body.password, device, route: 'Mfa/Disable' })
    const check = await secondFactor.check(request, account.id, request.body.code, { deviceId: device?.id ?? null })
    if (check.outcome === 'off') throw wrongState('off')
    if (check.outcome !== 'accepted') throw refuseCode(context, request, reply, 'Mfa/Disable', account, check, { afterPassword: true })
    if (await secondFactor.disable(request, account.id)) {
      emit(request, { type: 'mfa.disabled', accountId: account.id })
      await trustedDevices?.endAll(request, account.id, 'mfa_changed')
      await sessionService.reauthenticate(request, sessionId, true)
      await sessionService.endOthers(request, account.id, sessionId, 'mfa_changed')
      outbox.send(request, { type: 'mfa_disabled', to: account.email, accountId: account.id })
    }
    return await reply.code(204).send()
  })

  routes.post('/Mfa/RecoveryCodes', guarded('Replace the recovery codes', `With the password and a current TOTP code; the old recovery codes stop working.${passwordNote}`, {
    body: RecoveryCodesBody,
    ok: { 200: jsonResponse('The new recovery codes.', RecoveryCodesReply) },
    errors: SWITCH_ERRORS
  }), async (request, reply) => {
    const account = accountOf(request)!
    if (await secondFactor.state(request, account.id) !== 'on') throw wrongState('off')
    const device = await knownDevices.recognise(request, account.email, account)
    await proveSessionPassword(context, request, reply, { account, sessionId: sessionOf(request)!.id, password: request.body.password, device, route: 'Mfa/RecoveryCodes' })
    // A TOTP code only: a recovery code, one of those being replaced, proves nothing new.
    const check = await secondFactor.check(request, account.id, request.body.code, { recovery: false, deviceId: device?.id ?? null })
    if (check.outcome === 'off') throw wrongState('off')
    if (check.outcome !== 'accepted') throw refuseCode(context, request, reply, 'Mfa/RecoveryCodes', account, check, { afterPassword: true })
    const codes = await secondFactor.replaceRecoveryCodes(request, account.id)
    if (codes === null) throw wrongState('off')
    emit(request, { type: 'mfa.recovery_codes_replaced', accountId: account.id })
    return { recoveryCodes: codes }
  })
}
