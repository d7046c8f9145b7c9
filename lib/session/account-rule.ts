import type { PasswordAuthAccount } from '../stores/types.js'

/** Why an account can no longer hold its sessions. */
export type AccountProblem = 'account_deleted' | 'account_inactive' | 'credentials_changed'

/**
 * What a one-time token (a link, a login challenge) binds beyond the credential version: the account it was issued
 * for, read by id or by address, and, for a link sent to an address, that address.
 */
export interface TokenBinding {
  accountId: string
  email?: string
}

/**
 * The one rule of "does this token's account still stand", for every token: a session's (access token at the guard
 * and Logout, refresh token at Refresh) and a one-time token's (account/service.ts's ofToken: reset and e-mail change
 * links, login challenges). The account still exists (and is the one the token names), is active, has the credential
 * version the token was issued at, and (a link) still has the address the link went to. It lives on session/'s floor
 * because the guard and Refresh check it on every request; the account service applies it to one-time tokens. All of
 * them read the account through stores/account-reads.ts.
 */
export function accountProblem (account: PasswordAuthAccount | null, credentialVersion: number, binding?: TokenBinding): AccountProblem | undefined {
  if (account === null || (binding !== undefined && account.id !== binding.accountId)) return 'account_deleted'
  if (!account.active) return 'account_inactive'
  if (account.credentialVersion !== credentialVersion) return 'credentials_changed'
  if (binding?.email !== undefined && account.email !== binding.email) return 'credentials_changed'
  return undefined
}

/** True if the account may still hold a token issued at credential version `credentialVersion` (and bound as `binding` says). */
export function accountAccepts<A extends PasswordAuthAccount> (account: A | null, credentialVersion: number, binding?: TokenBinding): account is A {
  return accountProblem(account, credentialVersion, binding) === undefined
}
