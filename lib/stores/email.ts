/**
 * An e-mail address: after trimming, 3 to 254 characters with exactly one `@` that has text on both
 * sides, and no white space or control characters inside. The surrounding white space is allowed here
 * because the address is trimmed before use.
 */
export const EMAIL_PATTERN = String.raw`^\s*(?=\S{3,254}\s*$)[^\s@\x00-\x1f\x7f-\x9f]+@[^\s@\x00-\x1f\x7f-\x9f]+\s*$`

/** The form in which e-mail addresses are compared and handed to stores. */
export function normalizeEmail (email: string): string {
  return email.trim().toLowerCase()
}

/** The part before the `@` of a normalised address. */
export function localPart (normalizedEmail: string): string {
  return normalizedEmail.slice(0, normalizedEmail.indexOf('@'))
}
