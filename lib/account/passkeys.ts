import type { FastifyBaseLogger } from 'fastify'

/**
 * What account self-service and the admin need of an account's passkeys (contract §18, §19, §22): RevertEmailChange
 * and DeleteAccount remove them, Export lists them, admin.removePasskeys removes them and says how many.
 */
export interface AccountPasskeys {
  /** The account's passkeys as Export shows them (the list of GET /Passkeys). */
  list (caller: { log: FastifyBaseLogger }, accountId: string): Promise<unknown[]>
  /** Removes every passkey of the account; resolves how many there were. */
  removeAll (caller: { log: FastifyBaseLogger }, accountId: string): Promise<number>
}

/**
 * THE PASSKEY SEAM: the one place an account's passkeys are reached from account/ and routes/. Passkeys do not exist
 * yet, so there is nothing to reach: undefined, and every caller treats that as "no passkeys" (admin.removePasskeys
 * throws "passkeys are not configured"). When passkeys land, this builds AccountPasskeys over their store, and
 * RevertEmailChange, DeleteAccount, Export and removePasskeys use it with no change of their own.
 */
export function accountPasskeys (): AccountPasskeys | undefined {
  return undefined
}
