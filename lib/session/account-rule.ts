import type { PasswordAuthAccount } from '../stores/types.js'

/** Why an account can no longer hold its sessions. */
export type AccountProblem = 'account_deleted' | 'account_inactive' | 'credentials_changed'

/**
 * The one rule for every token of a session (access token at the guard and Logout, refresh token at
 * Refresh): its account still exists, is active, and has the credential version the session started with.
 */
export function accountProblem (account: PasswordAuthAccount | null, credentialVersion: number): AccountProblem | undefined {
  if (account === null) return 'account_deleted'
  if (!account.active) return 'account_inactive'
  if (account.credentialVersion !== credentialVersion) return 'credentials_changed'
  return undefined
}

/** True if the account may still hold a session started at credential version `credentialVersion`. */
export function accountAccepts (account: PasswordAuthAccount | null, credentialVersion: number): account is PasswordAuthAccount {
  return accountProblem(account, credentialVersion) === undefined
}
