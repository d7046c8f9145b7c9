import { createHash } from 'node:crypto'

/**
 * The attempt-store group of an account's own counters (a known device's, for passwords and for codes):
 * `<group>/<name>` keys, forgotten together by clearGroup() when the account is deleted. A plain hash of the id
 * (no key: every instance and every key rotation agrees), so the store holds no account id.
 */
export function accountGroup (accountId: string): string {
  return `acct.${createHash('sha256').update(`fastify-password-auth account-group\0${accountId}`).digest('base64url').slice(0, 22)}`
}
