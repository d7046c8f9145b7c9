import type { FastifyReply, FastifyRequest } from 'fastify'
import { tokenBody } from './token-body.js'
import type { AccountReads } from '../stores/account-reads.js'
import type { SessionInfo } from '../stores/types.js'
import type { SecureCookie } from '../http/secure-cookie.js'
import type { SessionService, TokenReply } from './service.js'

/** `fastify.passwordAuth.sessions`: the host's hands on sessions. Store failures reject with a 503 error. */
export interface SessionApi {
  /**
   * Starts a session for an account the host authenticated another way (an invitation link, an OAuth
   * callback) and resolves what Login answers; in cookie mode the refresh token goes into the cookie on
   * `reply`. Resolves null if the account does not exist or is inactive.
   */
  start (accountId: string, context: { request: FastifyRequest, reply: FastifyReply }): Promise<TokenReply | null>
  /** The account's live sessions, oldest first. Pass the request you act for, if any, so the events name it. */
  list (accountId: string, context?: { request?: FastifyRequest }): Promise<SessionInfo[]>
  /**
   * Ends one session: its access and refresh tokens stop working at the next request. True if it was live.
   * With `accountId`, only a session of that account (a session id from a user is not proof it is theirs).
   */
  end (sessionId: string, context?: { request?: FastifyRequest, accountId?: string }): Promise<boolean>
  /** Ends every session of the account ("log out everywhere"); resolves how many were live. */
  endAll (accountId: string, context?: { request?: FastifyRequest }): Promise<number>
}

interface Parts {
  sessionService: SessionService
  accounts: AccountReads
  refreshCookie: SecureCookie | undefined
}

export function createSessionApi ({ sessionService, accounts, refreshCookie }: Parts): SessionApi {
  return {
    start: async (accountId, { request, reply }) => {
      const account = await accounts.byId(request, accountId)
      if (account === null || !account.active) return null
      return tokenBody(reply, (await sessionService.start(request, account)).tokenReply, refreshCookie)
    },
    list: async (accountId, { request } = {}) => await sessionService.list(request, accountId),
    end: async (sessionId, { request, accountId } = {}) => {
      if (accountId !== undefined && await sessionService.ownerOf(request, sessionId) !== accountId) return false
      return await sessionService.end(request, sessionId, 'ended_by_host') !== null
    },
    endAll: async (accountId, { request } = {}) => await sessionService.endAll(request, accountId, 'ended_by_host')
  }
}
