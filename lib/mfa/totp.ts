import { generateSecret, generateURI, verifySync } from 'otplib'

/** RFC 6238 as authenticator apps use it: HMAC-SHA1, 30-second steps, 6 digits. */
const PERIOD_SECONDS = 30

/** A new TOTP secret: 160 random bits (RFC 4226's recommendation), base32. */
export function newTotpSecret (): string {
  return generateSecret({ length: 20 })
}

/** The `otpauth://totp/<issuer>:<email>?secret=…&issuer=…` URI an authenticator app reads from a QR code. */
export function otpauthUrl (issuer: string, email: string, secret: string): string {
  return generateURI({ issuer, label: email, secret })
}

/**
 * The time step a 6-digit `code` matches for `secret`, within one step either side of now and above
 * `afterStep` (the last one accepted), or null. The caller records the step: a step is accepted once.
 */
export function totpStep (secret: string, code: string, afterStep: number): number | null {
  const result = verifySync({ secret, token: code, epochTolerance: PERIOD_SECONDS, afterTimeStep: afterStep > 0 ? afterStep : undefined })
  // otplib's TOTP result carries timeStep; its union type with HOTP's result does not show it.
  return result.valid ? (result as { timeStep: number }).timeStep : null
}
