import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { requestError, type PasswordAuthError } from '../common/errors.js'
import { accountOf, authenticate, requireRecentAuthentication, sessionOf } from '../guard/authenticate.js'
import { BODY_ERRORS, guardedProblemResponses, jsonResponse, noContentResponse, problemResponses, setCookieHeader } from '../http/openapi.js'
import {
  CreationOptionsReply, LoginMfaOptionsBody, LoginPasskeyBody, PasskeyReply, RegisterPasskeyBody, RequestOptionsReply
} from '../http/passkey-schemas.js'
import { documentedTokenReply } from '../http/schemas.js'
import type { PasskeyCheck } from '../passkeys/passkeys.js'
import { accountAccepts } from '../session/account-rule.js'
import { tokenBody } from '../session/token-body.js'
import type { PasskeyRouteContext } from './context.js'

const TAGS = ['Passkeys']
const DEVICE_TOKEN = Type.Optional(Type.String({ description: 'The device token of an earlier sign-in from this client, as at Login.' }))

/** A refused passkey: 429 while its credential is blocked, else the one 401 (400 at registration). */
export function refusePasskey (check: Exclude<PasskeyCheck, { outcome: 'accepted' }>): PasswordAuthError {
  return check.outcome === 'throttled'
    ? requestError('FST_PWAUTH_TOO_MANY_ATTEMPTS', { retryAfter: check.retryAfter })
    : requestError('FST_PWAUTH_PASSKEY_INVALID')
}

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
    onRequest: recent,
    schema: {
      summary: 'Options to create a passkey',
      description: `Needs the access token, a password or passkey proof within the last ${reauthMaxAge} s (Reauthenticate) and, with two factors on, ` +
        'a session that proved one. The body is ignored.',
      tags: TAGS,
      security: [{ bearerAuth: [] }],
      response: { 200: jsonResponse('Creation options with a new challenge.', CreationOptionsReply), ...guardedProblemResponses(['FST_PWAUTH_MFA_REQUIRED'], { recent: true }) }
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

/** POST /Passkeys (a registration response) and POST /LoginMfa/Options: JSON bodies, no argon2. */
export function registerPasskeyJson (app: FastifyInstance, context: PasskeyRouteContext): void {
  const { passkeys, reauthMaxAge, outbox, oneTimeTokens, accounts, storeCall, secondFactor } = context
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()

  routes.post('/Passkeys', {
    onRequest: [authenticate, requireRecentAuthentication(reauthMaxAge)],
    schema: {
      summary: 'Add a passkey',
      description: 'With the response of startRegistration() to the options of RegisterOptions. Needs what RegisterOptions needs. ' +
        'Any failure, a credential already stored (for any account) or another user handle: 400 FST_PWAUTH_PASSKEY_INVALID.',
      tags: TAGS,
      security: [{ bearerAuth: [] }],
      body: RegisterPasskeyBody,
      response: {
        201: jsonResponse('Added.', PasskeyReply),
        ...guardedProblemResponses([...BODY_ERRORS, 'FST_PWAUTH_PASSKEY_INVALID', 'FST_PWAUTH_PASSKEY_LIMIT', 'FST_PWAUTH_MFA_REQUIRED'],
          { recent: true, statuses: { FST_PWAUTH_PASSKEY_INVALID: 400 } })
      }
    }
  }, async (request, reply) => {
    await requireFullAuthentication(context, request)
    const account = accountOf(request)!
    const name = request.body.name?.trim() ?? 'Passkey'
    const result = await passkeys.register(request, account, request.body.response, name)
    if (result.outcome === 'limit') throw requestError('FST_PWAUTH_PASSKEY_LIMIT')
    if (result.outcome === 'invalid') throw Object.assign(requestError('FST_PWAUTH_PASSKEY_INVALID'), { statusCode: 400 })
    outbox.send(request, { type: 'passkey_added', to: account.email, accountId: account.id, passkeyName: name })
    return await reply.code(201).send(result.passkey)
  })

  if (secondFactor === undefined) return
  routes.post('/LoginMfa/Options', {
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
    const account = challenge === null ? null : await storeCall(request.log, 'accounts.findById', () => accounts.findById(challenge.accountId))
    if (challenge === null || !accountAccepts(account, challenge.credentialVersion)) throw requestError('FST_PWAUTH_MFA_CODE_INVALID')
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
        'Every failure is one 401 FST_PWAUTH_PASSKEY_INVALID; failures count per credential.',
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
    if (check.outcome !== 'accepted') throw refusePasskey(check)
    const { account, amr } = check
    const deviceId = (await knownDevices.recognise(request, account.email, account))?.id ?? null
    const { sessionId, tokenReply } = await sessionService.start(request, account, true, false, amr)
    const newDevice = context.noticeNewDevice(request, reply, account, deviceId)
    emit(request, { type: 'login.succeeded', accountId: account.id, email: account.email, sessionId, mfa: true, passkey: true, ...newDevice ? { newDevice } : {} })
    return { ...tokenBody(reply, tokenReply, refreshCookie), ...knownDevices.issue(reply, account.email, account, deviceId) }
  })
}
