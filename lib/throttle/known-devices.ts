import type { FastifyReply, FastifyRequest } from 'fastify'
import type { SecureCookie } from '../http/secure-cookie.js'
import type { AccountReads } from '../stores/account-reads.js'
import type { StoredAccount } from '../stores/types.js'
import type { DeviceOwner, DeviceTokens } from './device-tokens.js'

/** A known device a request proved: its id, and the account whose address its token is bound to. */
export interface KnownDevice {
  id: string
  accountId: string
}

/** What Login, ChangePassword and Reauthenticate need of known devices (contract §6). */
export interface KnownDevices {
  /**
   * The device a request proves for `email` (body field `deviceToken`, or the device cookie); null if none.
   * A token minted before the account's last password change or reset proves nothing: `account` when the
   * caller has it, else the account is read (only when a token came).
   */
  recognise (request: FastifyRequest, email: string, account?: { id: string, credentialVersion: number }): Promise<KnownDevice | null>
  /**
   * recognise() for callers that read the account next (Login, ChangePassword): `account` is what it read
   * (null: no such account), or undefined when no token came and nothing was read.
   */
  recogniseReading (request: FastifyRequest, email: string): Promise<{ device: KnownDevice | null, account?: StoredAccount | null }>
  /**
   * After a successful Login: a device token for `email` and its account that keeps `deviceId`'s counter, if the
   * request had one. In cookie mode it goes into the device cookie and the body gets nothing.
   */
  issue (reply: FastifyReply, email: string, account: DeviceOwner, deviceId: string | null): { deviceToken?: string }
}

/** `cookie`: the device cookie in cookie mode (session/options.ts names it after the refresh cookie). */
export function createKnownDevices (deviceTokens: DeviceTokens, cookie: SecureCookie | undefined, accounts: AccountReads): KnownDevices {
  function presentedTokens (request: FastifyRequest): unknown[] {
    const body = request.body as { deviceToken?: unknown } | undefined
    const read = cookie?.read(request)
    return [body?.deviceToken, read?.kind === 'one' ? read.token : undefined].filter((token) => deviceTokens.looksLikeOne(token))
  }

  function deviceOf (presented: unknown[], email: string, owner: DeviceOwner): KnownDevice | null {
    for (const token of presented) {
      const deviceId = deviceTokens.read(token, email, owner)
      if (deviceId !== null) return { id: deviceId, accountId: owner.id }
    }
    return null
  }

  return {
    async recognise (request, email, account) {
      const presented = presentedTokens(request)
      if (presented.length === 0) return null
      const owner = account ?? await accounts.byEmail(request, email)
      return owner === null ? null : deviceOf(presented, email, owner)
    },
    async recogniseReading (request, email) {
      const presented = presentedTokens(request)
      if (presented.length === 0) return { device: null }
      const account = await accounts.byEmail(request, email)
      return { device: account === null ? null : deviceOf(presented, email, account), account }
    },
    issue (reply, email, account, deviceId) {
      const deviceToken = deviceTokens.mint(email, account, deviceId ?? undefined)
      if (cookie === undefined) return { deviceToken }
      cookie.set(reply, deviceToken, deviceTokens.ttlSeconds)
      return {}
    }
  }
}
