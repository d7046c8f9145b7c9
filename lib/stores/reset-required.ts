/**
 * The stored marker of "only a reset by e-mail restores this account" (contract §20, §22): the account's hash
 * with this prefix in front. The password still verifies against the hash behind it, so the refusal (403
 * PASSWORD_RESET_REQUIRED) comes only after a correct password, and anyone without it gets Login's 401. A reset
 * replaces the whole string (compare-and-set on it), which lifts the mark. It starts with `!`, which Django reads
 * as an unusable password, so a system that shares the table refuses the password too.
 */
const MARK = '!reset-required!'

/** The hash with the mark (once: marking a marked hash changes nothing). */
export function markResetRequired (storedHash: string): string {
  return storedHash.startsWith(MARK) ? storedHash : MARK + storedHash
}

/** Whether a reset is required, and the hash to verify the password against. */
export function readResetMark (storedHash: string): { resetRequired: boolean, hash: string } {
  return storedHash.startsWith(MARK) ? { resetRequired: true, hash: storedHash.slice(MARK.length) } : { resetRequired: false, hash: storedHash }
}
