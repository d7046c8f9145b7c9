import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import { requestError } from '../common/errors.js'
import { randomId } from '../common/random-id.js'
import type { EmitEvent, RefreshFailureReason } from '../common/events.js'
import { accountAccepts, accountProblem } from './account-rule.js'
import type { RefreshTokens } from './refresh-tokens.js'
import type { AccountReads } from '../stores/account-reads.js'
import { sessionEndAtOnce } from '../stores/at-once.js'
import { callAtOnce, type StoreCall } from '../stores/store-call.js'
import type {
  PasswordAuthAccount, RotationResult, SessionEndReason, SessionInfo, SessionPolicy, SessionStore, SessionTimes
} from '../stores/types.js'
import type { AccessTokenClaims, AccessTokens, IssuedAccessToken } from '../tokens/access-tokens.js'

/** The body of a successful Login or Refresh. */
export interface TokenReply extends IssuedAccessToken {
  /** Only when refresh tokens are on. */
  refreshToken?: string
  refreshExpiresIn?: number
}

export interface SessionServiceOptions {
  store: SessionStore
  accounts: AccountReads
  accessTokens: AccessTokens
  refreshTokens: RefreshTokens
  storeCall: StoreCall
  emit: EmitEvent
  policy: SessionPolicy
  /** Whether Login and Refresh hand out refresh tokens. */
  refresh: boolean
  /** For calls made outside a request (the host API). */
  log: FastifyBaseLogger
}

/** What a sign-in proved beyond the password, as its session keeps it. */
export interface SignInProof {
  /** A second factor (a code, a passkey, or a device trusted for them). */
  mfa?: boolean
  /** A device trusted for the second factor stood for the code (contract §21). */
  trustedDevice?: boolean
  /** A passkey's methods (with mfa), for the tokens' amr. */
  amr?: readonly string[] | undefined
}

const USER_AGENT_LIMIT = 256

/** A refresh that fails: one 401 for every reason, the reason kept for the event. */
class RefreshFailure extends Error {
  constructor (readonly reason: RefreshFailureReason, readonly accountId?: string) {
    super(reason)
  }
}

/**
 * Sessions: started at Login, refreshed with one-time refresh tokens (a grace answer for concurrent
 * refreshes, reuse ending the session), ended by Logout, a password change, the host, or reuse.
 */
export class SessionService {
  readonly policy: Readonly<SessionPolicy>
  readonly refreshEnabled: boolean
  readonly #store: SessionStore
  readonly #accounts: AccountReads
  readonly #accessTokens: AccessTokens
  readonly #refreshTokens: RefreshTokens
  readonly #storeCall: StoreCall
  readonly #emit: EmitEvent
  readonly #log: FastifyBaseLogger

  constructor ({ store, accounts, accessTokens, refreshTokens, storeCall, emit, policy, refresh, log }: SessionServiceOptions) {
    this.#log = log
    this.#store = store
    this.#accounts = accounts
    this.#accessTokens = accessTokens
    this.#refreshTokens = refreshTokens
    this.#storeCall = storeCall
    this.#emit = emit
    this.policy = Object.freeze({ ...policy })
    this.refreshEnabled = refresh
  }

  /** Starts a session for an account that just proved its password, or a passkey, and what `proof` says. */
  async start (request: FastifyRequest, account: PasswordAuthAccount, { mfa = false, trustedDevice = false, amr }: SignInProof = {}): Promise<{ sessionId: string, tokenReply: TokenReply }> {
    const sessionId = randomId()
    const keyId = this.#refreshTokens.currentKeyId
    const userAgent = String(request.headers['user-agent'] ?? '').replace(/\p{Cc}/gu, '').slice(0, USER_AGENT_LIMIT)
    const times = await this.#storeCall(request.log, 'sessions.create', () => this.#store.create({
      id: sessionId, accountId: account.id, credentialVersion: account.credentialVersion, keyId, ip: request.ip, userAgent, mfa, trustedDevice, ...amr === undefined ? {} : { amr: [...amr] }
    }, this.policy))
    this.#emit(request, { type: 'session.started', accountId: account.id, sessionId })
    return { sessionId, tokenReply: this.#tokenReply(account, sessionId, 0, keyId, times, mfa, trustedDevice, amr) }
  }

  /** Exchanges a refresh token for new tokens; every failure is one 401 REFRESH_TOKEN_INVALID. */
  async refresh (request: FastifyRequest, token: string): Promise<TokenReply> {
    const fields = this.#refreshTokens.read(token)
    try {
      if (fields === null) throw new RefreshFailure('invalid')
      const { sessionId, generation, createdAt } = fields
      const state = await this.#storeCall(request.log, 'sessions.get', () => this.#store.get(sessionId))
      let account: PasswordAuthAccount | null = null
      if (state !== null) {
        // The account is checked before rotating: a store failure here leaves the refresh token as it was.
        account = await this.#accounts.byId(request, state.accountId)
        const problem = accountProblem(account, state.credentialVersion)
        if (problem !== undefined) {
          await this.end(request, sessionId, problem === 'credentials_changed' ? 'credentials_changed' : 'account_inactive')
          throw new RefreshFailure(problem, state.accountId)
        }
      }
      const result = await this.#storeCall(request.log, 'sessions.rotate', async () =>
        await this.#store.rotate(sessionId, generation, this.#refreshTokens.currentKeyId, this.policy))
      if ((result.outcome === 'rotated' || result.outcome === 'grace') && account !== null) {
        this.#emit(request, { type: 'session.refreshed', accountId: account.id, sessionId, grace: result.outcome === 'grace' })
        return this.#tokenReply(account, sessionId, result.generation, result.keyId, result, result.mfa === true, result.trustedDevice === true, result.amr)
      }
      if (result.outcome === 'reused') {
        this.#emit(request, { type: 'session.reuse_detected', accountId: result.accountId, sessionId })
        this.#emit(request, { type: 'session.ended', accountId: result.accountId, sessionId, reason: 'refresh_token_reused' })
        throw new RefreshFailure('reused', result.accountId)
      }
      throw new RefreshFailure(this.#reasonOf(result, createdAt))
    } catch (err) {
      if (!(err instanceof RefreshFailure)) throw err
      this.#emit(request, { type: 'session.refresh_failed', reason: err.reason, accountId: err.accountId, sessionId: fields?.sessionId })
      throw requestError('FST_PWAUTH_REFRESH_TOKEN_INVALID')
    }
  }

  /** Ends a live session; resolves its account id if this call ended it. Logout reports itself; other ends emit `session.ended`. */
  async end (request: FastifyRequest | undefined, sessionId: string, reason: SessionEndReason): Promise<string | null> {
    const accountId = await this.#storeCall(request?.log ?? this.#log, 'sessions.end', () => this.#store.end(sessionId, reason))
    if (accountId !== null && reason !== 'logout') this.#emit(request, { type: 'session.ended', accountId, sessionId, reason })
    return accountId
  }

  /**
   * Logout's end of the session of an access token, with the account read beside it in the same fail-closed store
   * call (one deadline and one promise layer for both: Logout is among the cheapest requests, so each counts). True
   * if this call ended the session, it was the token's account's, and that account still stands (account-rule.ts).
   * Not async: its own promise and the await of the store call's were one more promise and microtask turn per Logout.
   * With stores that answer in the same turn (the memory stores: at-once.ts) it answers at once, a throw
   * being the store's 503.
   */
  endForLogout (request: FastifyRequest, { sid, sub, cv }: Pick<AccessTokenClaims, 'sid' | 'sub' | 'cv'>): boolean | Promise<boolean> {
    const end = sessionEndAtOnce(this.#store)
    const account = end === undefined ? undefined : this.#accounts.byIdAtOnce(request, sub)
    if (account !== undefined) return callAtOnce(request.log, 'sessions.end', () => end!(sid, 'logout')) === sub && accountAccepts(account, cv)
    return this.#storeCall(request.log, 'sessions.end, accounts.findById', () =>
      Promise.all([this.#store.end(sid, 'logout'), this.#accounts.byIdInsideStoreCall(sub)]))
      .then(([ended, account]) => ended === sub && accountAccepts(account, cv))
  }

  /**
   * Logout by refresh token (cookie mode, when the access token is missing or has expired): ends the
   * session the token belongs to. Its MAC proves the session is the caller's; resolves null if the token is
   * not one of this server's or the session had already ended.
   */
  async endByRefreshToken (request: FastifyRequest, token: string): Promise<{ accountId: string, sessionId: string } | null> {
    const fields = this.#refreshTokens.read(token)
    if (fields === null) return null
    const accountId = await this.end(request, fields.sessionId, 'logout')
    return accountId === null ? null : { accountId, sessionId: fields.sessionId }
  }

  /** Records a fresh password proof (and, `mfa`, a second factor) on the session; false if it is no longer live. */
  async reauthenticate (request: FastifyRequest, sessionId: string, mfa = false, amr?: readonly string[]): Promise<boolean> {
    return await this.#storeCall(request.log, 'sessions.reauthenticate', () => amr === undefined
      ? this.#store.reauthenticate(sessionId, mfa)
      : this.#store.reauthenticate(sessionId, mfa, [...amr])) !== null
  }

  /** The account a live session belongs to, or null. */
  async ownerOf (request: FastifyRequest | undefined, sessionId: string): Promise<string | null> {
    const state = await this.#storeCall(request?.log ?? this.#log, 'sessions.get', () => this.#store.get(sessionId))
    return state?.accountId ?? null
  }

  /** Ends every session of an account; resolves how many were live. */
  async endAll (request: FastifyRequest | undefined, accountId: string, reason: Exclude<SessionEndReason, 'logout'>): Promise<number> {
    const ended = await this.#storeCall(request?.log ?? this.#log, 'sessions.endAll', () => this.#store.endAll(accountId, reason))
    for (const sessionId of ended) this.#emit(request, { type: 'session.ended', accountId, sessionId, reason })
    return ended.length
  }

  /**
   * Removes every session record of the account, live or ended (account deletion); the live ones are reported as
   * ended. Resolves how many were live. Needs a store with forget().
   */
  async forget (request: FastifyRequest | undefined, accountId: string): Promise<number> {
    const store = this.#store
    if (store.forget === undefined) return await this.endAll(request, accountId, 'account_deleted')
    const ended = await this.#storeCall(request?.log ?? this.#log, 'sessions.forget', async () => await store.forget!(accountId))
    for (const sessionId of ended) this.#emit(request, { type: 'session.ended', accountId, sessionId, reason: 'account_deleted' })
    return ended.length
  }

  /** Ends every live session of the account but `currentId`; resolves how many it ended. */
  async endOthers (request: FastifyRequest, accountId: string, currentId: string, reason: Exclude<SessionEndReason, 'logout'>): Promise<number> {
    let ended = 0
    for (const { id } of await this.list(request, accountId)) {
      if (id !== currentId && await this.end(request, id, reason) !== null) ended++
    }
    return ended
  }

  async list (request: FastifyRequest | undefined, accountId: string): Promise<SessionInfo[]> {
    return await this.#storeCall(request?.log ?? this.#log, 'sessions.list', () => this.#store.list(accountId))
  }

  /** A store that forgot the session can still say whether its absolute limit had passed. */
  #reasonOf (result: RotationResult, createdAt: number): RefreshFailureReason {
    if (result.outcome === 'unknown' && Date.now() - createdAt >= this.policy.maxMs) return 'expired'
    return result.outcome === 'ended' || result.outcome === 'idle' || result.outcome === 'expired' ? result.outcome : 'unknown'
  }

  #tokenReply (account: PasswordAuthAccount, sessionId: string, generation: number, keyId: string, times: SessionTimes, mfa: boolean, trustedDevice: boolean, amr?: readonly string[]): TokenReply {
    const subject = { accountId: account.id, sessionId, credentialVersion: account.credentialVersion, mfa, trustedDevice, amr }
    const reply: TokenReply = this.#accessTokens.issue(subject, Date.now() + times.expiresInMs)
    if (this.refreshEnabled) {
      reply.refreshToken = this.#refreshTokens.mint({ sessionId, generation, createdAt: times.createdAt }, keyId)
      reply.refreshExpiresIn = Math.floor(times.expiresInMs / 1000)
    }
    return reply
  }
}
