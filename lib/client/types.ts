// The wire types of every route, taken from the plugin's own schemas (type-only imports: nothing of the server
// reaches the browser). A route whose body or answer changes changes these types, and the client's type check fails.
import type { Static } from '@sinclair/typebox'
import type { FieldError, RequestErrorCode, WeakPasswordReason } from '../common/errors.js'
import type {
  CreationOptionsReply, PasskeyAssertion, PasskeyAttestation, PasskeyReply, RegisterPasskeyBody, RequestOptionsReply
} from '../http/passkey-schemas.js'
import type {
  ChangeEmailBody, ChangePasswordBody, ConfirmMfaBody, DeleteAccountBody, DisableMfaBody, ForgotPasswordBody, LoginBody, LoginMfaBody,
  MfaChallengeReply, RecoveryCodesBody, ReauthenticateBody, registerBody, ResetPasswordBody, RevertEmailChangeBody, TokenReply,
  VerifyEmailBody, VerifyEmailChangeBody
} from '../http/schemas.js'
import type { ExportReply } from '../routes/account/account-export.js'
import type { MfaSetupReply, MfaStatusReply, RecoveryCodesReply } from '../routes/security/mfa.js'
import type { EndOthersReply, Session } from '../routes/sessions/sessions.js'
import type { TrustedDevice } from '../routes/security/trusted-devices.js'

/** The client adds the device token itself (token mode) or the browser sends its cookie (cookie mode). */
type Sent<T> = Omit<T, 'deviceToken'>

/** The `code` of every problem+json answer of the plugin. */
export type ProblemCode = RequestErrorCode
export type { WeakPasswordReason }

export type LoginRequest = Sent<Static<typeof LoginBody>>
export type LoginMfaRequest = Sent<Static<typeof LoginMfaBody>>
export type MfaChallenge = Static<typeof MfaChallengeReply>
export type TokenAnswer = Static<typeof TokenReply>
export type ReauthenticateRequest = Sent<Static<typeof ReauthenticateBody>>
export type ChangePasswordRequest = Sent<Static<typeof ChangePasswordBody>>
export type ForgotPasswordRequest = Static<typeof ForgotPasswordBody>
export type ResetPasswordRequest = Static<typeof ResetPasswordBody>
/** Register's body: the built-in fields, and the host's own `registration.fields`. */
export type RegisterRequest = Static<ReturnType<typeof registerBody>> & { email: string, password: string, confirmPassword: string } & Record<string, unknown>
export type VerifyEmailRequest = Static<typeof VerifyEmailBody>
export type ConfirmMfaRequest = Sent<Static<typeof ConfirmMfaBody>>
export type DisableMfaRequest = Sent<Static<typeof DisableMfaBody>>
export type RecoveryCodesRequest = Sent<Static<typeof RecoveryCodesBody>>
export type MfaStatus = Static<typeof MfaStatusReply>
export type MfaSetup = Static<typeof MfaSetupReply>
export type RecoveryCodes = Static<typeof RecoveryCodesReply>
export type SessionView = Static<typeof Session>
export type EndOthers = Static<typeof EndOthersReply>
export type TrustedDeviceView = Static<typeof TrustedDevice>
export type ChangeEmailRequest = Sent<Static<typeof ChangeEmailBody>>
export type VerifyEmailChangeRequest = Static<typeof VerifyEmailChangeBody>
export type RevertEmailChangeRequest = Static<typeof RevertEmailChangeBody>
export type DeleteAccountRequest = Sent<Static<typeof DeleteAccountBody>>
export type AccountExport = Static<typeof ExportReply>
export type Passkey = Static<typeof PasskeyReply>
export type AddPasskeyRequest = Sent<Omit<Static<typeof RegisterPasskeyBody>, 'response'>>
export type PasskeyCreationOptions = Static<typeof CreationOptionsReply>
export type PasskeyRequestOptions = Static<typeof RequestOptionsReply>
export type PasskeyAssertionJSON = Static<typeof PasskeyAssertion>
export type PasskeyAttestationJSON = Static<typeof PasskeyAttestation>

/** A problem+json answer (RFC 9457) as the plugin sends it. */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code: ProblemCode
  errors?: FieldError[]
  reasons?: WeakPasswordReason[]
}
