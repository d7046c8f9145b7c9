import type { FastifyRequest } from 'fastify'
import type { PasswordAuthAccount } from '../stores/types.js'
import { PURPOSE, type TokenPurpose } from '../tokens/purposes.js'
import type { AccountParts } from './parts.js'

/**
 * Everything the plugin holds of an account, in every store: its sessions (live and ended), second factor and code
 * counters, one-time tokens (links, login and passkey challenges), the address's attempt counter and message budgets,
 * its known devices' counters, trusted devices, passkeys, activity. Run after the account itself is gone, so nothing
 * new can be started for it meanwhile and whatever a failing store leaves is inert (every token, challenge and link is
 * checked against the account). Each part is tried even when an earlier one failed; resolves the parts that failed.
 */
export async function forgetEverywhere (parts: AccountParts, request: FastifyRequest | undefined, account: PasswordAuthAccount,
  formerEmails: string[]): Promise<{ failed: string[], error?: unknown }> {
  const { sessionService, secondFactor, trustedDevices, oneTimeTokens, throttle, mailLimit, passkeys, activity, storeCall } = parts
  const caller = request ?? { log: parts.log }
  // Without the store's removeAll, one slot each: a revert link and a note per address left (both slotted by it).
  const tokens: Array<TokenPurpose | [TokenPurpose, string]> = [PURPOSE.passwordReset, PURPOSE.emailChange, [PURPOSE.emailRevert, account.email],
    ...formerEmails.flatMap((email): Array<[TokenPurpose, string]> => [[PURPOSE.emailRevert, email], [PURPOSE.emailLeft, email]])]
  const forgets: Array<[string, (() => Promise<unknown>) | undefined]> = [
    ['sessions', async () => await sessionService.forget(request, account.id)],
    ['mfa', secondFactor === undefined ? undefined : async () => await secondFactor.forget(caller, account.id)],
    ['trustedDevices', trustedDevices === undefined ? undefined : async () => { await trustedDevices.forget(caller, account.id) }],
    ['oneTimeTokens', async () => { await oneTimeTokens.forgetAccount(caller, account.id, tokens) }],
    ['attempts', async () => { await throttle.forget(caller, account.email) }],
    ['deviceAttempts', async () => { await throttle.forgetAccount(caller, account.id) }],
    ['mailLimit', async () => { await mailLimit.forget(caller, account.email) }],
    ['passkeys', passkeys === undefined ? undefined : async () => await passkeys.forget(caller, account.id)],
    ['activity', async () => { await storeCall(caller.log, 'activity.forget', () => activity.forget(account.id)) }]
  ]
  const result: { failed: string[], error?: unknown } = { failed: [] }
  for (const [name, forget] of forgets) {
    try {
      await forget?.()
    } catch (err) {
      result.failed.push(name)
      result.error ??= err
    }
  }
  return result
}

/**
 * Deletes the account through the account store first (the one step that ends every way into it), then forgets it
 * everywhere else. account_deleted goes to the address and to every address the account left within revertTtl (by a
 * change or a revert: a taker who moved the account away first cannot delete it unseen). Resolves false if the account
 * was gone already (a concurrent deletion); rejects with the first store failure once the account is gone but not all
 * of it (what is left expires by itself). `admin`: the host's admin who deleted it (admin.account_deleted names them).
 */
export async function deleteAccount (parts: AccountParts, request: FastifyRequest | undefined, account: PasswordAuthAccount, admin?: string): Promise<boolean> {
  const { accountService, oneTimeTokens, emit, outbox } = parts
  const caller = request ?? { log: parts.log }
  // Read before anything goes: the notes go with the account's tokens.
  const formerEmails = (await oneTimeTokens.notes(caller, PURPOSE.emailLeft, account.id)).filter((email) => email !== account.email)
  if (!await accountService.delete(caller, account.id)) return false
  const { failed, error } = await forgetEverywhere(parts, request, account, formerEmails)
  emit(request, { type: 'account.deleted', accountId: account.id, email: account.email, ...(failed.length > 0 ? { leftovers: failed } : {}) })
  if (admin !== undefined) emit(request, { type: 'admin.account_deleted', admin, accountId: account.id })
  for (const to of [account.email, ...new Set(formerEmails)]) outbox.send(request, { type: 'account_deleted', to, accountId: account.id })
  if (error !== undefined) throw error
  return true
}
