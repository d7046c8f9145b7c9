import { localPart } from '../stores/email.js'
import type { WeakPasswordReason } from '../errors.js'
import { codePointLength, normalizePassword } from './hasher.js'

export interface PasswordPolicyOptions {
  /** Minimum length in Unicode code points (default 15, the NIST SP 800-63B-4 minimum for a password used alone). */
  minLength?: number
  /** Maximum length in Unicode code points (default 128). */
  maxLength?: number
  /**
   * Your own check of a new password (NFC-normalised), such as a blocklist or a breached-password
   * service. Resolve false to reject it. If it throws, the change fails closed with 503.
   */
  check?: (password: string, context: { email: string }) => boolean | Promise<boolean>
}

/** The policy as the plugin runs it: lengths filled in (resolvePolicy in options.ts checks them). */
export interface ResolvedPasswordPolicy extends Required<Omit<PasswordPolicyOptions, 'check'>> {
  check: PasswordPolicyOptions['check']
}

/** NIST SP 800-63B-4: at least 15 code points for a password used alone; 128 leaves room for passphrases. */
export const DEFAULT_PASSWORD_POLICY = Object.freeze({ minLength: 15, maxLength: 128 })

export interface PasswordPolicy {
  /** Code points after NFC; the ChangePassword schema documents them. */
  minLength: number
  maxLength: number
  /** The policy's objections to `newPassword`; empty when it passes. No composition rules, by design. */
  evaluate (newPassword: string, currentPassword: string, email: string): Promise<WeakPasswordReason[]>
}

export function createPasswordPolicy ({ minLength, maxLength, check }: ResolvedPasswordPolicy): PasswordPolicy {
  return {
    minLength,
    maxLength,
    async evaluate (newPassword, currentPassword, email) {
      const candidate = normalizePassword(newPassword)
      const reasons: WeakPasswordReason[] = []
      const length = codePointLength(candidate)
      if (length < minLength) reasons.push('too_short')
      if (length > maxLength) reasons.push('too_long')
      if (candidate === normalizePassword(currentPassword)) reasons.push('same_as_current')
      const local = localPart(email)
      if (codePointLength(local) >= 4 && candidate.toLowerCase().includes(local)) reasons.push('contains_email')
      // An outside check is only worth asking about a password of acceptable length.
      if (check !== undefined && length >= minLength && length <= maxLength && !(await check(candidate, { email }))) {
        reasons.push('rejected')
      }
      return reasons
    }
  }
}
