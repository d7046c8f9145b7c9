import type { FastifyRequest } from 'fastify'
import type { AccountParts } from './parts.js'

/**
 * Tells that two factors were turned off from outside the owner's own session (an admin's resetSecondFactor,
 * RevertEmailChange, after mfa/remove-second-factor.ts found them on): mfa.disabled, and mfa_disabled to `to`.
 */
export function tellSecondFactorOff ({ emit, outbox }: Pick<AccountParts, 'emit' | 'outbox'>, request: FastifyRequest | undefined, accountId: string, to: string): void {
  emit(request, { type: 'mfa.disabled', accountId })
  outbox.send(request, { type: 'mfa_disabled', to, accountId })
}
