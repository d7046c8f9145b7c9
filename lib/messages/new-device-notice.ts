import type { FastifyReply, FastifyRequest } from 'fastify'
import { describeDevice, deviceLabel } from '../http/user-agent.js'
import type { PasswordAuthAccount } from '../stores/types.js'
import type { MailLimit } from './mail-limit.js'
import type { Outbox } from './outbox.js'

/**
 * Tells the owner of a sign-in from a device that had no live device token of the account (contract §21):
 * Login, LoginMfa and LoginPasskey call it once their session has started, with the device id the request
 * proved (KnownDevices.recognise), and nothing happens when there is one. The message (time, address, a
 * readable device label) goes after the answer, within `mailLimit`.
 */
export type NewDeviceNotice = (request: FastifyRequest, reply: FastifyReply, account: PasswordAuthAccount, deviceId: string | null) => boolean

export function createNewDeviceNotice (outbox: Outbox, mailLimit: MailLimit): NewDeviceNotice {
  return function noticeNewDevice (request, reply, account, deviceId) {
    if (deviceId !== null) return false
    if (!outbox.delivers) return true
    const message = {
      type: 'new_device_login' as const,
      to: account.email,
      accountId: account.id,
      at: Date.now(),
      ip: request.ip,
      device: deviceLabel(describeDevice(request.headers['user-agent']))
    }
    outbox.afterResponse(reply, async () => {
      if (await mailLimit.take(request, account.email, 'new_device_login')) outbox.send(request, message)
    })
    return true
  }
}
