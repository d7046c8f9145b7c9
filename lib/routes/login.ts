import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { normalizeEmail } from '../email.js'
import { requestError } from '../errors.js'
import { isWeakerHash } from '../password.js'
import { LoginBody, LoginReply, PROBLEM_RESPONSES } from '../schemas.js'
import type { StoredAccount } from '../stores/types.js'
import type { RouteContext } from './context.js'

export function registerLogin (app: FastifyInstance, context: RouteContext): void {
  const { accounts, hasher, tokens, checkPassword, storeCall, emit } = context

  /** Upgrades a hash made with weaker parameters. Best effort: the login succeeds either way. */
  async function rehashIfWeaker (request: FastifyRequest, account: StoredAccount, password: string): Promise<void> {
    if (!isWeakerHash(account.passwordHash, hasher.params)) return
    try {
      const newHash = await hasher.hash(password)
      await storeCall(request, 'accounts.updatePasswordHash', async () => await accounts.updatePasswordHash({
        id: account.id, expectedHash: account.passwordHash, newHash, advanceCredentialVersion: false
      }))
    } catch {
      // Already logged by storeCall, or hashing is at capacity: the next login tries again.
    }
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/Login', {
    schema: {
      summary: 'Log in with e-mail address and password',
      description: 'Returns a short-lived access token. Unknown e-mail, wrong password and inactive account all get the same 401.',
      tags: ['Auth'],
      body: LoginBody,
      response: { 200: LoginReply, ...PROBLEM_RESPONSES }
    }
  }, async (request) => {
    const email = normalizeEmail(request.body.email)
    const result = await checkPassword(request, email, request.body.password)
    if (result.outcome === 'throttled') {
      emit(request, { type: 'login.throttled', email, retryAfter: result.retryAfter })
      throw requestError('FST_PWAUTH_TOO_MANY_ATTEMPTS', { retryAfter: result.retryAfter })
    }
    if (result.outcome === 'failed') {
      emit(request, { type: 'login.failed', reason: result.reason, accountId: result.account?.id, email })
      throw requestError('FST_PWAUTH_INVALID_CREDENTIALS')
    }
    await rehashIfWeaker(request, result.account, request.body.password)
    emit(request, { type: 'login.succeeded', accountId: result.account.id, email })
    return tokens.issue(result.account)
  })
}
