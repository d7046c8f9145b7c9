import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AuthEventDetails } from '../../common/events.js'
import { randomId } from '../../common/random-id.js'
import type { SignInProof, TokenReply } from '../../session/service.js'
import { tokenBody } from '../../session/token-body.js'
import type { PasswordAuthAccount } from '../../stores/types.js'
import type { RouteContext } from '../context.js'

/** A sign-in whose every check passed, as its route hands it over. */
export interface SignIn {
  account: PasswordAuthAccount
  /** The address signed in with: Login's as typed (normalised), the account's for the others. */
  email: string
  /** The known device the request proved (KnownDevices.recognise); null: a new device, whose owner is told. */
  deviceId: string | null
  /** What the session proved beyond the password; `passkey`: a passkey alone (LoginPasskey), for the event. */
  proof: SignInProof & { passkey?: boolean }
  /**
   * Whether the factors the sign-in was judged on still stand, read again once the session exists: a switch of two
   * factors, or an end of every trust, that landed meanwhile ended the account's other sessions, perhaps before this
   * one existed (contract §15, §21). False ends the session and finishSignIn resolves null.
   */
  stillStands?: () => Promise<boolean>
  /** Runs with the device token's id before the token is issued (LoginMfa's rememberDevice trusts that device). */
  beforeDeviceToken?: (deviceId: string) => Promise<void>
}

/**
 * The end of every sign-in (Login, LoginMfa, LoginPasskey, and the next method's): starts the session, checks the
 * factors again, tells the owner of a new device, emits `login.succeeded`, and answers the token body with a device
 * token that keeps the device's counter. Null: the factors changed meanwhile and the session was ended.
 */
export async function finishSignIn (context: RouteContext, request: FastifyRequest, reply: FastifyReply, signIn: SignIn):
Promise<(TokenReply & { deviceToken?: string }) | null> {
  const { sessionService, knownDevices, noticeNewDevice, emit, refreshCookie } = context
  const { account, email, deviceId, proof } = signIn
  const { sessionId, tokenReply } = await sessionService.start(request, account, proof)
  if (signIn.stillStands !== undefined && !await signIn.stillStands()) {
    await sessionService.end(request, sessionId, 'mfa_changed')
    return null
  }
  const succeeded: Extract<AuthEventDetails, { type: 'login.succeeded' }> = { type: 'login.succeeded', accountId: account.id, email, sessionId }
  if (proof.mfa === true) succeeded.mfa = true
  if (proof.passkey === true) succeeded.passkey = true
  if (proof.trustedDevice === true) succeeded.trustedDevice = true
  if (noticeNewDevice(request, reply, account, deviceId)) succeeded.newDevice = true
  emit(request, succeeded)
  const tokenDeviceId = deviceId ?? randomId()
  await signIn.beforeDeviceToken?.(tokenDeviceId)
  // Object.assign onto this request's own reply object: two spreads take V8's slow path (~1.2 µs a login).
  return Object.assign(tokenBody(reply, tokenReply, refreshCookie), knownDevices.issue(reply, email, account, tokenDeviceId))
}
