import type { FastifyBaseLogger } from 'fastify'
import type { SecondFactor } from './second-factor.js'
import type { TrustedDevices } from './trusted-devices.js'

/**
 * Turns the account's two factors off from outside the owner's own session (an admin's resetSecondFactor,
 * RevertEmailChange): the secret, the recovery codes and the code counters go, and every trusted device ends.
 * Resolves whether two factors were on. The caller ends the sessions and sends mfa_disabled.
 */
export async function removeSecondFactor (
  { secondFactor, trustedDevices }: { secondFactor: SecondFactor, trustedDevices: TrustedDevices | undefined },
  caller: { log: FastifyBaseLogger },
  accountId: string
): Promise<boolean> {
  const wasOn = await secondFactor.forget(caller, accountId)
  await trustedDevices?.endAll(caller, accountId, 'mfa_changed')
  return wasOn
}
