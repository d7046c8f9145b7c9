import type { FastifyRequest } from 'fastify'
import { localPart } from '../stores/email.js'
import { requestError, type WeakPasswordReason } from '../common/errors.js'
import type { BreachCheck } from './breach-options.js'
import { loadCommonPasswords } from './common-passwords.js'
import { codePointLength, normalizePassword } from './hasher.js'

export interface PasswordPolicyOptions {
  /** Minimum length in Unicode code points (default 15, the NIST SP 800-63B-4 minimum for a password used alone). */
  minLength?: number
  /** Maximum length in Unicode code points (default 128). */
  maxLength?: number
  /**
   * Refuse passwords on the built-in list of commonly used and breached passwords, as NIST SP 800-63B-4
   * requires (reason `common`), compared after NFC and case folding. Default true; set false only if your
   * `check` already covers such a list.
   */
  common?: boolean
  /**
   * Your own check of a new password (NFC-normalised), such as a blocklist or a breached-password
   * service. Resolve false to reject it. If it throws, the change fails closed with 503.
   */
  check?: (password: string, context: { email: string }) => boolean | Promise<boolean>
}

/** The policy as the plugin runs it: lengths and `common` filled in (resolvePasswordPolicy in options.ts checks them). */
export interface ResolvedPasswordPolicy extends Required<Omit<PasswordPolicyOptions, 'check'>> {
  check: PasswordPolicyOptions['check']
}

/** NIST SP 800-63B-4: at least 15 code points for a password used alone; 128 leaves room for passphrases. */
export const DEFAULT_PASSWORD_POLICY = Object.freeze({ minLength: 15, maxLength: 128, common: true })

export interface PasswordPolicy {
  /** Code points after NFC; the ChangePassword schema documents them. */
  minLength: number
  maxLength: number
  /**
   * The policy's objections to `newPassword` (`same_as_current` only when there is a current password); empty
   * when it passes. With a range service (contract §20), `breached` too; a service that gives no answer is
   * reported and, with onUnavailable 'refuse', throws 503 UNAVAILABLE. It depends on the body alone.
   */
  evaluate (newPassword: string, currentPassword: string | undefined, email: string, request: FastifyRequest): Promise<WeakPasswordReason[]>
}

export function createPasswordPolicy ({ minLength, maxLength, common, check }: ResolvedPasswordPolicy, breach?: BreachCheck): PasswordPolicy {
  // The built-in list is loaded here, at registration (once per process), not on a request.
  const isCommon = common ? loadCommonPasswords() : undefined
  return {
    minLength,
    maxLength,
    async evaluate (newPassword, currentPassword, email, request) {
      const candidate = normalizePassword(newPassword)
      const reasons: WeakPasswordReason[] = []
      const length = codePointLength(candidate)
      if (length < minLength) reasons.push('too_short')
      if (length > maxLength) reasons.push('too_long')
      if (currentPassword !== undefined && candidate === normalizePassword(currentPassword)) reasons.push('same_as_current')
      const local = localPart(email)
      if (codePointLength(local) >= 4 && candidate.toLowerCase().includes(local)) reasons.push('contains_email')
      // The list and an outside check are only worth asking about a password of acceptable length;
      // the host's check runs whatever the list says.
      const acceptableLength = length >= minLength && length <= maxLength
      if (isCommon !== undefined && acceptableLength && isCommon(candidate)) reasons.push('common')
      if (check !== undefined && acceptableLength && !(await check(candidate, { email }))) {
        reasons.push('rejected')
      }
      // The range service is asked only about a password the list does not refuse already.
      if (breach !== undefined && acceptableLength && !reasons.includes('common')) {
        const verdict = await breach.check(request, candidate, 'new')
        if (verdict === 'breached') reasons.push('breached')
        if (verdict === 'unavailable' && breach.onUnavailable === 'refuse' && reasons.length === 0) {
          throw requestError('FST_PWAUTH_UNAVAILABLE', { retryAfter: 1 })
        }
      }
      return reasons
    }
  }
}
