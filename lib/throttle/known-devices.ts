import type { FastifyReply, FastifyRequest } from 'fastify'
import type { SecureCookie } from '../http/secure-cookie.js'
import type { DeviceTokens } from './device-tokens.js'

/** What Login, ChangePassword and Reauthenticate need of known devices (contract §6). */
export interface KnownDevices {
  /** The device id a request proves for `email` (body field `deviceToken`, or the device cookie); null if none. */
  recognise (request: FastifyRequest, email: string): string | null
  /**
   * After a successful Login: a device token for `email` that keeps `deviceId`'s counter, if the request
   * had one. In cookie mode it goes into the device cookie and the body gets nothing.
   */
  issue (reply: FastifyReply, email: string, deviceId: string | null): { deviceToken?: string }
}

/** `cookie`: the device cookie in cookie mode (session/options.ts names it after the refresh cookie). */
export function createKnownDevices (deviceTokens: DeviceTokens, cookie: SecureCookie | undefined): KnownDevices {
  return {
    recognise (request, email) {
      const body = request.body as { deviceToken?: unknown } | undefined
      const fromBody = deviceTokens.read(body?.deviceToken, email)
      if (fromBody !== null || cookie === undefined) return fromBody
      const read = cookie.read(request)
      return read.kind === 'one' ? deviceTokens.read(read.token, email) : null
    },
    issue (reply, email, deviceId) {
      const deviceToken = deviceTokens.mint(email, deviceId ?? undefined)
      if (cookie === undefined) return { deviceToken }
      cookie.set(reply, deviceToken, deviceTokens.ttlSeconds)
      return {}
    }
  }
}
