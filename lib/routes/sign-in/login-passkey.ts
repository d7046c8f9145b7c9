import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { BODY_ERRORS, jsonResponse, problemResponses, setCookieHeader } from '../../http/openapi.js'
import { LoginPasskeyBody, RequestOptionsReply } from '../../http/passkey-schemas.js'
import { documentedTokenReply } from '../../http/schemas.js'
import type { PasskeyRouteContext } from '../context.js'
import { refusePasskey } from '../refusals.js'
import { finishSignIn } from './finish-sign-in.js'

const TAGS = ['Passkeys']
const DEVICE_TOKEN = Type.Optional(Type.String({ description: 'The device token of an earlier sign-in from this client, as at Login.' }))

/** POST /Passkeys/LoginOptions: the first step of a passkey sign-in, without a body. */
export function registerLoginPasskeyOptions (app: FastifyInstance, context: PasskeyRouteContext): void {
  const { passkeys } = context

  app.withTypeProvider<TypeBoxTypeProvider>().post('/Passkeys/LoginOptions', {
    schema: {
      summary: 'Options to sign in with a passkey',
      description: 'No authentication, no body: the same shape for every caller, with an empty allowCredentials (discoverable passkeys).',
      tags: TAGS,
      response: { 200: jsonResponse('Request options with a new challenge.', RequestOptionsReply), ...problemResponses(['FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE']) }
    }
  }, async (request) => await passkeys.requestOptions(request, 'login', null))
}

/** POST /LoginPasskey: a sign-in without a password, in Login's context. */
export function registerLoginPasskey (app: FastifyInstance, context: PasskeyRouteContext): void {
  const { passkeys, knownDevices, refreshCookie, refresh } = context

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
    // No factor to read again: the passkey alone was the proof.
    return await finishSignIn(context, request, reply, { account, email: account.email, deviceId, proof: { mfa: true, amr, passkey: true } })
  })
}
