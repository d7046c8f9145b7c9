import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { normalizeEmail } from '../../stores/email.js'
import { BODY_ERRORS, jsonResponse, problemResponses, setCookieHeader } from '../../http/openapi.js'
import { Type } from '@sinclair/typebox'
import { documentedTokenReply, LoginBody, MfaChallengeReply } from '../../http/schemas.js'
import type { StoredAccount } from '../../stores/types.js'
import { BCRYPT_MAX_PASSWORD_BYTES } from '../../password/legacy/bcrypt.js'
import { PURPOSE } from '../../tokens/purposes.js'
import type { RouteContext } from '../context.js'
import { refusePassword, refuseResetRequired } from '../refusals.js'
import { finishSignIn } from './finish-sign-in.js'

export function registerLogin (app: FastifyInstance, context: RouteContext): void {
  const {
    accountService, hasher, checkPassword, knownDevices, emit, refreshCookie, refresh, upgradeHashes, secondFactor, oneTimeTokens, mfaTtlMs, trustedDevices
  } = context
  const documentedReply = documentedTokenReply({ refresh, cookie: refreshCookie !== undefined, device: true })

  /**
   * Replaces a legacy hash, or an argon2 hash with weaker parameters, by argon2id with the configured
   * ones. The compare-and-set on the verified hash discards the upgrade if a password change got there
   * first. Best effort: the login succeeds either way.
   */
  async function upgradeHash (request: FastifyRequest, account: StoredAccount, password: string, from: string): Promise<void> {
    try {
      const newHash = await hasher.hash(password)
      if (await accountService.setPasswordHash(request, account, newHash, false)) emit(request, { type: 'password.rehashed', accountId: account.id, email: account.email, from })
    } catch {
      // Already logged by storeCall, or hashing is at capacity: the next login tries again.
    }
  }

  /** The answer for an account with two factors on: no session, no token, no device token until the second factor is proved. */
  async function challenge (request: FastifyRequest, account: StoredAccount) {
    const mfaToken = await oneTimeTokens.issue(request, PURPOSE.mfaLogin, account, mfaTtlMs)
    emit(request, { type: 'login.mfa_required', accountId: account.id, email: account.email })
    return { mfaRequired: true as const, mfaToken, mfaExpiresIn: Math.floor(mfaTtlMs / 1000) }
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/Login', {
    schema: {
      summary: 'Log in with e-mail address and password',
      description: 'Starts a session: a short-lived access token and, with refresh on, a refresh token; and a device token that keeps this client signing in while strangers have the address blocked. Unknown e-mail, wrong password and inactive account all get the same 401.' +
        (trustedDevices === undefined ? '' : ' With two factors on, a device trusted for them (LoginMfa\'s rememberDevice, with its device token) gets tokens instead of a challenge.'),
      tags: ['Auth'],
      body: LoginBody,
      response: {
        200: secondFactor === undefined
          ? jsonResponse('Logged in: an access token and, with refresh on, a refresh token.', documentedReply, refreshCookie === undefined ? {} : setCookieHeader(refreshCookie, 'set'))
          : jsonResponse('Logged in; or, for an account with two factors on, only a challenge to answer at LoginMfa with a code.',
            Type.Union([documentedReply, MfaChallengeReply]), refreshCookie === undefined ? {} : setCookieHeader(refreshCookie, 'set')),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_INVALID_CREDENTIALS', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE', 'FST_PWAUTH_PASSWORD_RESET_REQUIRED'])
      }
    }
  }, async (request, reply) => {
    const email = normalizeEmail(request.body.email)
    const { device, account: read } = await knownDevices.recogniseReading(request, email)
    const deviceId = device?.id ?? null
    const result = await checkPassword(request, email, request.body.password, device, read)
    if (result.outcome === 'reset_required') throw refuseResetRequired(context, request, reply, 'Login', result.account, result.reason)
    if (result.outcome !== 'accepted') {
      emit(request, result.outcome === 'throttled'
        ? { type: 'login.throttled', email, retryAfter: result.retryAfter, device: result.device }
        : { type: 'login.failed', reason: result.reason, accountId: result.account?.id, email })
      throw refusePassword(result)
    }
    if (result.needsUpgrade && upgradeHashes) {
      const { password } = request.body
      if (result.hashFormat === 'bcrypt' && Math.max(Buffer.byteLength(password), Buffer.byteLength(password.normalize('NFC'))) > BCRYPT_MAX_PASSWORD_BYTES) {
        emit(request, { type: 'password.rehash_skipped', accountId: result.account.id, email, reason: 'bcrypt_72_bytes' })
      } else {
        await upgradeHash(request, result.account, password, result.hashFormat)
      }
    }
    const { account } = result
    const enrolment = secondFactor === undefined ? null : await secondFactor.enrolment(request, account.id)
    // With two factors on, only a device trusted for them (contract §21) skips the code.
    const trust = enrolment === null || deviceId === null || trustedDevices === undefined ? null : await trustedDevices.use(request, { account, deviceId, enrolment })
    if (enrolment !== null && trust === null) return await challenge(request, account)
    const body = await finishSignIn(context, request, reply, {
      account,
      email,
      deviceId,
      proof: { mfa: trust !== null, trustedDevice: trust !== null },
      stillStands: secondFactor === undefined
        ? undefined
        : async () => await secondFactor.enrolment(request, account.id) === enrolment && (trust === null || await trustedDevices!.stillCurrent(request, account.id, trust.generation))
    })
    return body ?? await challenge(request, account)
  })
}
