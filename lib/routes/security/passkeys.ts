import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { requestError } from '../../common/errors.js'
import { accountOf, authenticate, guardStateOf, requireRecentAuthentication, sessionOf } from '../../guard/authenticate.js'
import { BODY_ERRORS, guardedProblemResponses, jsonResponse, noContentResponse, problemResponses, setCookieHeader } from '../../http/openapi.js'
import {
  CreationOptionsReply, LoginMfaOptionsBody, LoginPasskeyBody, PasskeyReply, RegisterPasskeyBody, RequestOptionsReply
} from '../../http/passkey-schemas.js'
import { documentedTokenReply } from '../../http/schemas.js'
import { tokenBody } from '../../session/token-body.js'
import type { PasskeyRouteContext } from '../context.js'
import { proveSessionPassword } from './session-password.js'

const TAGS = ['Passkeys']
const DEVICE_TOKEN = Type.Optional(Type.String({ description: 'The device token of an earlier sign-in from this client, as at Login.' }))

/** A refused passkey response: the one 401, whatever the reason (400 at registration). */
export const refusePasskey = (): Error => requestError('FST_PWAUTH_PASSKEY_INVALID')

/**
 * Enrolment needs a session that proved everything the account has: with two factors on, a second factor
 * too (a password-only session cannot add a way in that skips them).
 */
async function requireFullAuthentication (context: PasskeyRouteContext, request: FastifyRequest): Promise<void> {
  const { secondFactor } = context
  if (sessionOf(request)!.mfa || secondFactor === undefined) return
  if (await secondFactor.state(request, accountOf(request)!.id) === 'on') throw requestError('FST_PWAUTH_MFA_REQUIRED')
}

/** The passkey routes without a body (contract §18): options, the list, removal. */
export function registerPasskeyBodiless (app: FastifyInstance, context: PasskeyRouteContext): void {
  const { passkeys, reauthMaxAge, outbox } = context
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  const recent = [authenticate, requireRecentAuthentication(reauthMaxAge)]

  routes.post('/Passkeys/RegisterOptions', {
    onRequest: authenticate,
    schema: {
      summary: 'Options to create a passkey',
      description: 'Needs the access token and, with two factors on, a session that proved one. No recent authentication: ' +
        'POST /Passkeys takes the password. The body is ignored.',
      tags: TAGS,
      security: [{ bearerAuth: [] }],
      response: { 200: jsonResponse('Creation options with a new challenge.', CreationOptionsReply), ...guardedProblemResponses(['FST_PWAUTH_MFA_REQUIRED']) }
    }
  }, async (request) => {
    await requireFullAuthentication(context, request)
    return await passkeys.registrationOptions(request, accountOf(request)!)
  })

  routes.get('/Passkeys', {
    onRequest: authenticate,
    schema: {
      summary: 'Your passkeys',
      tags: TAGS,
      security: [{ bearerAuth: [] }],
      response: { 200: jsonResponse('The caller\'s passkeys, oldest first.', Type.Array(PasskeyReply)), ...guardedProblemResponses([]) }
    }
  }, async (request) => await passkeys.list(request, accountOf(request)!.id))

  routes.delete('/Passkeys/:id', {
    onRequest: recent,
    schema: {
      summary: 'Remove one of your passkeys',
      description: `Needs the access token and a recent authentication (${reauthMaxAge} s). The owner is told by message.`,
      tags: TAGS,
      security: [{ bearerAuth: [] }],
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 1400 }) }),
      response: { 204: noContentResponse('Removed.'), ...guardedProblemResponses(['FST_PWAUTH_PASSKEY_NOT_FOUND'], { recent: true }) }
    }
  }, async (request, reply) => {
    const account = accountOf(request)!
    const removed = await passkeys.remove(request, account.id, request.params.id)
    if (removed === null) throw requestError('FST_PWAUTH_PASSKEY_NOT_FOUND')
    outbox.send(request, { type: 'passkey_removed', to: account.email, accountId: account.id, passkeyName: removed.name })
    return await reply.code(204).send()
  })

  routes.post('/Passkeys/LoginOptions', {
    schema: {
      summary: 'Options to sign in with a passkey',
      description: 'No authentication, no body: the same shape for every caller, with an empty allowCredentials (discoverable passkeys).',
      tags: TAGS,
      response: { 200: jsonResponse('Request options with a new challenge.', RequestOptionsReply), ...problemResponses(['FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE']) }
    }
  }, async (request) => await passkeys.requestOptions(request, 'login', null))

  routes.post('/Passkeys/ReauthOptions', {
    onRequest: authenticate,
    schema: {
      summary: 'Options to prove a passkey again (Reauthenticate)',
      description: 'Needs the access token. Lists the caller\'s passkeys. The body is ignored.',
      tags: TAGS,
      security: [{ bearerAuth: [] }],
      response: { 200: jsonResponse('Request options with a new challenge.', RequestOptionsReply), ...guardedProblemResponses([]) }
    }
  }, async (request) => await passkeys.requestOptions(request, 'reauthenticate', accountOf(request)!))
}

/**
 * POST /Passkeys: a registration response and the password, which stands for the recent authentication (a fresh
 * token taken by script in the page cannot enrol a passkey that outlives a password change), so it runs argon2
 * and lives with Login (its per-IP limit, its load shedding). The password is Login's check, on section 6's
 * counters. The account's passkey generation is read before the token is checked again, and the passkey is
 * stored only in that generation: a removal of every passkey (a reset, a revert, an admin) that lands while the
 * registration is in flight wins (contract §18).
 */
export function registerAddPasskey (app: FastifyInstance, context: PasskeyRouteContext): void {
  const { passkeys, outbox, knownDevices } = context

  app.withTypeProvider<TypeBoxTypeProvider>().post('/Passkeys', {
    onRequest: authenticate,
    schema: {
      summary: 'Add a passkey',
      description: 'With the response of startRegistration() to the options of RegisterOptions, and the account\'s password, which stands ' +
        'for a recent authentication (no Reauthenticate needed; a wrong or missing one is Login\'s 401, counted as Login counts it). ' +
        'With two factors on, a session that proved one. Any failure, a credential already stored (for any account), another user handle, ' +
        'or every passkey of the account removed meanwhile: 400 FST_PWAUTH_PASSKEY_INVALID.',
      tags: TAGS,
      security: [{ bearerAuth: [] }],
      body: RegisterPasskeyBody,
      response: {
        201: jsonResponse('Added.', PasskeyReply),
        ...guardedProblemResponses([...BODY_ERRORS, 'FST_PWAUTH_PASSKEY_INVALID', 'FST_PWAUTH_PASSKEY_LIMIT', 'FST_PWAUTH_MFA_REQUIRED',
          'FST_PWAUTH_INVALID_CREDENTIALS', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE', 'FST_PWAUTH_PASSWORD_RESET_REQUIRED'],
        { statuses: { FST_PWAUTH_PASSKEY_INVALID: 400 } })
      }
    }
  }, async (request, reply) => {
    const { id: accountId } = accountOf(request)!
    // The generation, then the guard's check again (the session live, the credential version the token's): a
    // removal that invalidates the session or the token, then removes the passkeys, is seen by one or the other.
    const generation = await passkeys.generation(request, accountId)
    await guardStateOf(request.server)!.verify(request)
    await requireFullAuthentication(context, request)
    const account = accountOf(request)!
    const device = await knownDevices.recognise(request, account.email, account)
    await proveSessionPassword(context, request, reply, { account, sessionId: sessionOf(request)!.id, password: request.body.password, device, route: 'Passkeys' })
    const name = request.body.name?.trim() ?? 'Passkey'
    const result = await passkeys.register(request, account, request.body.response, name, generation)
    if (result.outcome === 'limit') throw requestError('FST_PWAUTH_PASSKEY_LIMIT')
    if (result.outcome === 'invalid') throw Object.assign(requestError('FST_PWAUTH_PASSKEY_INVALID'), { statusCode: 400 })
    outbox.send(request, { type: 'passkey_added', to: account.email, accountId: account.id, passkeyName: name })
    return await reply.code(201).send(result.passkey)
  })
}

/** POST /LoginMfa/Options (with two factors on): a JSON body, no argon2. */
export function registerLoginMfaOptions (app: FastifyInstance, context: PasskeyRouteContext): void {
  const { passkeys, oneTimeTokens, accounts } = context

  app.withTypeProvider<TypeBoxTypeProvider>().post('/LoginMfa/Options', {
    schema: {
      summary: 'Options to finish a Login with a passkey instead of a code',
      description: 'With the mfaToken of the Login answer: request options listing the account\'s passkeys.',
      tags: TAGS,
      body: LoginMfaOptionsBody,
      response: {
        200: jsonResponse('Request options with a new challenge.', RequestOptionsReply),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_MFA_CODE_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request) => {
    const challenge = await oneTimeTokens.find(request, request.body.mfaToken, 'mfa_login')
    const account = challenge === null ? null : await accounts.ofToken(request, challenge)
    if (account === null) throw requestError('FST_PWAUTH_MFA_CODE_INVALID')
    return await passkeys.requestOptions(request, 'mfa', account)
  })
}

/** POST /LoginPasskey: a sign-in without a password, in Login's context (its per-IP limit). */
export function registerLoginPasskey (app: FastifyInstance, context: PasskeyRouteContext): void {
  const { passkeys, sessionService, knownDevices, emit, refreshCookie, refresh } = context

  app.withTypeProvider<TypeBoxTypeProvider>().post('/LoginPasskey', {
    schema: {
      summary: 'Sign in with a passkey',
      description: 'With the response of startAuthentication() to the options of Passkeys/LoginOptions. A passkey with user verification is ' +
        'a second factor by itself: the session\'s tokens carry amr ["hwk", "mfa"] (device-bound) or ["swk", "mfa"] (synced). ' +
        'Every failure is one 401 FST_PWAUTH_PASSKEY_INVALID, counted on no credential and no e-mail (Login\'s per-IP limit applies).',
      tags: TAGS,
      body: Type.Object({ ...LoginPasskeyBody.properties, deviceToken: DEVICE_TOKEN }),
      response: {
        200: jsonResponse('Signed in: Login\'s body.', documentedTokenReply({ refresh, cookie: refreshCookie !== undefined, device: true }),
          refreshCookie === undefined ? {} : setCookieHeader(refreshCookie, 'set')),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_PASSKEY_INVALID', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const check = await passkeys.verify(request, request.body.response, 'LoginPasskey', 'login')
    if (check.outcome !== 'accepted') throw refusePasskey()
    const { account, amr } = check
    const deviceId = (await knownDevices.recognise(request, account.email, account))?.id ?? null
    const { sessionId, tokenReply } = await sessionService.start(request, account, true, false, amr)
    const newDevice = context.noticeNewDevice(request, reply, account, deviceId)
    emit(request, { type: 'login.succeeded', accountId: account.id, email: account.email, sessionId, mfa: true, passkey: true, ...newDevice ? { newDevice } : {} })
    return { ...tokenBody(reply, tokenReply, refreshCookie), ...knownDevices.issue(reply, account.email, account, deviceId) }
  })
}
