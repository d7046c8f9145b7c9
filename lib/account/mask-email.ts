/**
 * An address as the old mailbox may see it when a change is asked for (contract §19): the first character of the
 * local part, then `***`, and the domain: `a***@example.net`. The owner recognises their own new address; a
 * stranger who took the account learns nothing more than the domain.
 */
export function maskEmail (email: string): string {
  const at = email.lastIndexOf('@')
  return `${[...email.slice(0, at)][0] ?? ''}***${email.slice(at)}`
}
