/**
 * Every purpose a one-time token is issued for, declared once. A token of one purpose is unknown to every
 * other, and the value is what the store keeps: renaming one ends the tokens in flight.
 */
export const PURPOSE = Object.freeze({
  /** A reset link (ForgotPassword → ResetPassword). */
  passwordReset: 'password_reset',
  /** A pending registration's link (Register → VerifyEmail), with the password hash and the host's fields. */
  verifyEmail: 'verify_email',
  /** A Login's second-factor challenge, the mfaToken (Login → LoginMfa, LoginMfa/Options). */
  mfaLogin: 'mfa_login',
  /** The link to a new address (ChangeEmail → VerifyEmailChange). */
  emailChange: 'email_change',
  /** The way back, sent to the address an account left (VerifyEmailChange → RevertEmailChange). */
  emailRevert: 'email_revert',
  /** Not a token but a note per address the account left (by a change or a revert), living revertTtl: the deletion notice goes there too. */
  emailLeft: 'email_left',
  /** WebAuthn challenges (contract §18), one purpose per ceremony. */
  passkeyRegister: 'passkey_register',
  passkeyLogin: 'passkey_login',
  passkeyReauthenticate: 'passkey_reauthenticate',
  passkeyMfa: 'passkey_mfa'
})

export type TokenPurpose = typeof PURPOSE[keyof typeof PURPOSE]

/**
 * Where a purpose's tokens live, which decides what a new one replaces: `account`, one per account (a new link
 * replaces the earlier one); `subject`, one per account and subject (a revert link per address left); `own`, a
 * random slot each (pending registrations of one address, logins on two devices, live side by side); `challenge`,
 * 32 random bytes whose slot is derived from them, so a WebAuthn response names its own.
 */
export type SlotRule = 'account' | 'subject' | 'own' | 'challenge'

export const SLOT_RULES: Readonly<Record<TokenPurpose, SlotRule>> = Object.freeze({
  password_reset: 'account',
  verify_email: 'own',
  mfa_login: 'own',
  email_change: 'account',
  email_revert: 'subject',
  email_left: 'subject',
  passkey_register: 'challenge',
  passkey_login: 'challenge',
  passkey_reauthenticate: 'challenge',
  passkey_mfa: 'challenge'
})
