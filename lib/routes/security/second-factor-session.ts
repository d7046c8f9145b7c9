import type { FastifyRequest } from 'fastify'
import { requestError } from '../../common/errors.js'
import { sessionOf } from '../../guard/authenticate.js'
import type { RouteContext } from '../context.js'

/**
 * For the routes that change who the account is (ChangeEmail, DeleteAccount): with two factors on, the session
 * must have passed them (401 MFA_REQUIRED otherwise), so a password alone cannot take or end an account that
 * has a second factor.
 */
export async function requireSecondFactorSession ({ secondFactor }: Pick<RouteContext, 'secondFactor'>, request: FastifyRequest, accountId: string): Promise<void> {
  if (secondFactor === undefined || sessionOf(request)?.mfa === true) return
  if (await secondFactor.enrolment(request, accountId) !== null) throw requestError('FST_PWAUTH_MFA_REQUIRED')
}
