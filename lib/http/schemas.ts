import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import { EMAIL_PATTERN } from '../stores/email.js'

/**
 * Well-formed UTF-16: no lone surrogate. argon2 would map every lone surrogate to U+FFFD, so different
 * passwords would share a hash. Means the same with or without the regular expression `u` flag.
 */
export const WELL_FORMED_PATTERN = String.raw`^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$`

export const MAX_PASSWORD_INPUT = 1024

export const Email = Type.String({
  pattern: EMAIL_PATTERN,
  description: 'E-mail address of a registered, active account; 3 to 254 characters after trimming.',
  examples: ['ada@example.com']
})

function password (description: string) {
  return Type.String({ minLength: 1, maxLength: MAX_PASSWORD_INPUT, pattern: WELL_FORMED_PATTERN, description })
}

/** Ignored when it is not a live device token of this e-mail: never an error of its own. */
const DeviceToken = Type.Optional(Type.String({
  description: 'The device token of an earlier Login of this e-mail from this client (not in cookie mode, where a cookie carries it): ' +
    'the attempt is judged on this device\'s own failure count, so strangers blocking the address do not block it.'
}))

export const LoginBody = Type.Object({
  email: Email,
  password: password('The account\'s password.'),
  deviceToken: DeviceToken
})

/** A second-factor code: 6 digits from the authenticator app, or (where said) a recovery code. */
export function mfaCode (description: string) {
  return Type.String({ minLength: 1, maxLength: 64, description })
}

const ANY_CODE = 'A 6-digit code from the authenticator app, or one of the recovery codes.'

export const ReauthenticateBody = Type.Object({
  password: password('The signed-in account\'s password.'),
  code: Type.Optional(mfaCode(`With two factors on: ${ANY_CODE}`)),
  deviceToken: DeviceToken
})

export const LoginMfaBody = Type.Object({
  mfaToken: Type.String({ minLength: 1, maxLength: 1024, description: 'The mfaToken of the Login answer.' }),
  code: mfaCode(ANY_CODE),
  deviceToken: DeviceToken,
  rememberDevice: Type.Optional(Type.Boolean({
    description: 'Trust this device (its device token) for the second factor for mfa.trustDays: a later Login from it with the right password needs no code. Ignored while trustDays is 0.'
  }))
})

const TOTP_CODE = 'A 6-digit code from the authenticator app.'

/** Confirm's, Disable's and RecoveryCodes' password: a wrong or missing one is Login's 401, counted like Login's. */
const SessionPassword = Type.Optional(password('The signed-in account\'s password: it stands for a recent authentication (no Reauthenticate needed).'))

/** RecoveryCodes' body: a TOTP code (a recovery code cannot replace them) and the password, as Disable takes it. */
export const RecoveryCodesBody = Type.Object({ code: mfaCode(TOTP_CODE), password: SessionPassword, deviceToken: DeviceToken })
export const ConfirmMfaBody = Type.Object({ code: mfaCode(`${TOTP_CODE} For the secret of Setup.`), password: SessionPassword, deviceToken: DeviceToken })
export const DisableMfaBody = Type.Object({ code: mfaCode(ANY_CODE), password: SessionPassword, deviceToken: DeviceToken })

/** The input rules of ChangePassword: what its validator checks. */
export const ChangePasswordBody = Type.Object({
  email: Email,
  currentPassword: password('The account\'s current password.'),
  newPassword: password('The new password; must satisfy the password policy.'),
  confirmNewPassword: password('The new password again; must equal newPassword exactly.'),
  code: Type.Optional(mfaCode(`Needed when the account has two factors on: ${ANY_CODE}`)),
  deviceToken: DeviceToken
})

/**
 * ChangePassword or ResetPassword as documented: newPassword carries the policy's lengths. JSON Schema
 * counts code points, as the policy does (after NFC); the policy, not the validator, enforces them, so a
 * password outside them gets 400 FST_PWAUTH_WEAK_PASSWORD with reasons, as the contract says.
 */
export function withDocumentedNewPassword<T extends TProperties> (body: TObject<T>, { minLength, maxLength }: { minLength: number, maxLength: number }) {
  return Type.Object({
    ...body.properties,
    newPassword: Type.String({
      minLength,
      maxLength,
      pattern: WELL_FORMED_PATTERN,
      description: `The new password: ${minLength} to ${maxLength} Unicode code points after NFC normalisation (and at most ` +
        `${MAX_PASSWORD_INPUT} UTF-16 code units), not the current password, not containing the e-mail's local part, ` +
        'not on the built-in list of common passwords. Otherwise: 400 FST_PWAUTH_WEAK_PASSWORD with reasons.'
    })
  })
}

/** The token of a link a message carried (reset, verification): opaque, at most 1024 characters. */
function linkToken (description: string) {
  return Type.String({ minLength: 1, maxLength: 1024, description })
}

export const ForgotPasswordBody = Type.Object({
  email: Type.String({ pattern: EMAIL_PATTERN, description: 'The account\'s e-mail address; every address gets the same answer.', examples: ['ada@example.com'] })
})

/** The input rules of ResetPassword: what its validator checks. */
export const ResetPasswordBody = Type.Object({
  token: linkToken('The token of the reset link the e-mail carried.'),
  newPassword: password('The new password; must satisfy the password policy.'),
  confirmNewPassword: password('The new password again; must equal newPassword exactly.'),
  code: Type.Optional(mfaCode(`Needed when the account has two factors on: ${ANY_CODE}`))
})

/** Register's body: the built-in fields and the host's own (registration.fields), every one required. */
export function registerBody (fields: Record<string, object>) {
  return Type.Object({
    email: Type.String({ pattern: EMAIL_PATTERN, description: 'The e-mail address to register; every address gets the same answer.', examples: ['ada@example.com'] }),
    password: password('The password; must satisfy the password policy.'),
    confirmPassword: password('The password again; must equal password exactly.'),
    ...(fields as Record<string, TSchema>)
  })
}

export const VerifyEmailBody = Type.Object({
  token: linkToken('The token of the verification link the e-mail carried.'),
  password: password('The account\'s password, usually the one typed at Register: whoever holds the link chooses it. Must satisfy the password policy.')
})

export const MAX_REFRESH_TOKEN = 1024

export const RefreshBody = Type.Object({
  refreshToken: Type.String({ minLength: 1, maxLength: MAX_REFRESH_TOKEN, description: 'The refresh token of the last Login or Refresh.' })
})

/** Cookie mode: the refresh token travels in its cookie, and the JSON body (`{}` is fine) keeps cross-site forms out. */
export const RefreshCookieBody = Type.Object({})

const TOKEN_REPLY = {
  accessToken: Type.String({ description: 'JWT access token (typ at+jwt); send it as `Authorization: Bearer <token>`.' }),
  tokenType: Type.Literal('Bearer'),
  expiresIn: Type.Integer({ description: 'Seconds until the access token expires.' })
}
const REFRESH_TOKEN = Type.String({
  maxLength: MAX_REFRESH_TOKEN,
  description: 'Opaque; exchange it at Refresh for new tokens. Each refresh token is good for one refresh.'
})
const REFRESH_EXPIRES_IN = Type.Integer({ description: 'Seconds until the session ends if the refresh token is not used.' })
const DEVICE_TOKEN = Type.String({
  description: 'Opaque; keep it and send it as deviceToken with the next Login, ChangePassword or Reauthenticate of this e-mail from this client.'
})

/** Login's, LoginMfa's, LoginPasskey's and Refresh's answer in its widest form (what a client reads): each field where documentedTokenReply puts it. */
export const TokenReply = Type.Object({
  ...TOKEN_REPLY,
  refreshToken: Type.Optional(REFRESH_TOKEN),
  refreshExpiresIn: Type.Optional(REFRESH_EXPIRES_IN),
  deviceToken: Type.Optional(DEVICE_TOKEN)
})

/** Login's answer for an account with two factors on: no token but the challenge for LoginMfa. */
export const MfaChallengeReply = Type.Object({
  mfaRequired: Type.Literal(true),
  mfaToken: Type.String({ description: 'Opaque; send it with a code to LoginMfa. Single-use; it dies after 5 wrong codes.' }),
  mfaExpiresIn: Type.Integer({ description: 'Seconds until mfaToken expires.' })
})

/**
 * Login's and Refresh's body as a registration sends it: refresh fields only with refresh on, the
 * tokens only outside cookie mode (where cookies carry them); the device token only in Login's.
 */
export function documentedTokenReply ({ refresh, cookie, device = false }: { refresh: boolean, cookie: boolean, device?: boolean }) {
  const properties: TProperties = { ...TOKEN_REPLY }
  if (refresh && !cookie) properties.refreshToken = REFRESH_TOKEN
  if (refresh) properties.refreshExpiresIn = REFRESH_EXPIRES_IN
  if (device && !cookie) properties.deviceToken = DEVICE_TOKEN
  return Type.Object(properties)
}

/** ChangeEmail's body (contract §19): the password stands for a recent authentication, as Confirm's does. */
export const ChangeEmailBody = Type.Object({
  newEmail: Type.String({ pattern: EMAIL_PATTERN, description: 'The address to move the account to; every address gets the same answer.', examples: ['ada@example.net'] }),
  password: SessionPassword,
  deviceToken: DeviceToken
})

/** DeleteAccount's body (contract §19). */
export const DeleteAccountBody = Type.Object({ password: SessionPassword, deviceToken: DeviceToken })

export const VerifyEmailChangeBody = Type.Object({
  token: linkToken('The token of the link the email_change message carried to the new address.')
})

/** RevertEmailChange's body: the token the old address got, and a new password (the old one is in other hands). */
export const RevertEmailChangeBody = Type.Object({
  token: linkToken('The token of the link the email_changed message carried to the old address.'),
  newPassword: password('The new password; must satisfy the password policy.'),
  confirmNewPassword: password('The new password again; must equal newPassword exactly.')
})
