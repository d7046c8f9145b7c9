import type { FastifyBaseLogger } from 'fastify'

/**
 * What account self-service and the admin need of an account's passkeys (contract §18, §19, §22): RevertEmailChange
 * and DeleteAccount remove them, Export lists them, admin.removePasskeys removes them and says how many. The
 * passkeys room's Passkeys provides it (plugin.ts hands it over; undefined while passkeys are off).
 */
export interface AccountPasskeys {
  /** The account's passkeys as Export shows them (the list of GET /Passkeys). */
  list (caller: { log: FastifyBaseLogger }, accountId: string): Promise<unknown[]>
  /** Removes every passkey of the account; resolves how many there were. */
  removeAll (caller: { log: FastifyBaseLogger }, accountId: string): Promise<number>
  /** Removes every passkey and the user handle of a deleted account (a store without forget(): the passkeys only). */
  forget (caller: { log: FastifyBaseLogger }, accountId: string): Promise<number>
}
