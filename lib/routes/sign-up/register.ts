import type { FastifyInstance } from 'fastify'
import { requestError } from '../../common/errors.js'
import { BODY_ERRORS, noContentResponse, problemResponses } from '../../http/openapi.js'
import { registerBody } from '../../http/schemas.js'
import { normalizeEmail } from '../../stores/email.js'
import { PURPOSE } from '../../tokens/purposes.js'
import type { RouteContext } from '../context.js'
import type { RegistrationRoutes } from '../options.js'

/**
 * POST /Register: the checks that depend on the body alone first; then one 202 for a new, pending, taken
 * or inactive address, each branch paying one argon2id hash. What differs (a pending registration and
 * its link, or an account_exists message, or nothing) happens after the answer.
 */
export function registerRegister (app: FastifyInstance, context: RouteContext, { ttlMs, fields: fieldSchemas }: RegistrationRoutes): void {
  const { accountService, hasher, policy, emit, outbox, mailLimit, oneTimeTokens } = context
  const fieldNames = Object.keys(fieldSchemas)

  app.post('/Register', {
    schema: {
      summary: 'Register an account; it exists once its e-mail address is verified',
      description: 'Answers 202 whatever the address. A new address gets a verify_email message with a one-time token; the owner of a taken address gets account_exists.',
      tags: ['Auth'],
      body: registerBody(fieldSchemas),
      response: {
        202: noContentResponse('Accepted: a message is on its way to the address.'),
        ...problemResponses([...BODY_ERRORS, 'FST_PWAUTH_PASSWORD_MISMATCH', 'FST_PWAUTH_WEAK_PASSWORD', 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'FST_PWAUTH_UNAVAILABLE'])
      }
    }
  }, async (request, reply) => {
    const body = request.body as Record<string, unknown> & { email: string, password: string, confirmPassword: string }
    if (body.password !== body.confirmPassword) throw requestError('FST_PWAUTH_PASSWORD_MISMATCH')
    const email = normalizeEmail(body.email)
    const reasons = await policy.evaluate(body.password, undefined, email, request)
    if (reasons.length > 0) throw requestError('FST_PWAUTH_WEAK_PASSWORD', { reasons })
    const fields = Object.fromEntries(fieldNames.map((name) => [name, body[name]]))

    // Every branch hashes once: a taken address answers in the time a new one does.
    const passwordHash = await hasher.hash(body.password)
    const account = await accountService.findByEmail(request, email)
    outbox.afterResponse(reply, async () => {
      if (account !== null && !account.active) {
        emit(request, { type: 'account.registration_requested', email, accountId: account.id, outcome: 'inactive_account' })
        return
      }
      if (!await mailLimit.take(request, email, account === null ? 'verify_email' : 'account_exists')) {
        emit(request, { type: 'account.registration_requested', email, accountId: account?.id, outcome: 'limited' })
        return
      }
      if (account !== null) {
        outbox.send(request, { type: 'account_exists', to: email, accountId: account.id })
        emit(request, { type: 'account.registration_requested', email, accountId: account.id, outcome: 'account_exists' })
        return
      }
      const token = await oneTimeTokens.issue(request, PURPOSE.verifyEmail, { id: '', email, credentialVersion: 0 }, ttlMs, { passwordHash, fields })
      outbox.send(request, { type: 'verify_email', to: email, token, expiresAt: Date.now() + ttlMs })
      emit(request, { type: 'account.registration_requested', email, outcome: 'sent' })
    })
    return await reply.code(202).send()
  })
}
