import { Type } from '@sinclair/typebox'
import { ConfirmMfaBody, LoginMfaBody, mfaCode, ReauthenticateBody } from './schemas.js'

/** base64url, as WebAuthn's JSON forms carry bytes. */
const bytes = (description: string, maxLength = 4096) => Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+={0,2}$', description })

const ClientExtensions = Type.Optional(Type.Object({}, { additionalProperties: true, description: 'clientExtensionResults (ignored).' }))

/** An AuthenticationResponseJSON (what @simplewebauthn/browser's startAuthentication() resolves). */
export const PasskeyAssertion = Type.Object({
  id: bytes('The credential id.', 1400),
  rawId: bytes('The credential id again.', 1400),
  type: Type.Literal('public-key'),
  response: Type.Object({
    clientDataJSON: bytes('clientDataJSON.'),
    authenticatorData: bytes('The authenticator data.'),
    signature: bytes('The signature.', 1024),
    userHandle: Type.Optional(bytes('The user handle of the account the passkey was made for.', 128))
  }),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  clientExtensionResults: ClientExtensions
}, { description: 'An authentication response (AuthenticationResponseJSON).' })

/** A RegistrationResponseJSON (what startRegistration() resolves). */
export const PasskeyAttestation = Type.Object({
  id: bytes('The credential id.', 1400),
  rawId: bytes('The credential id again.', 1400),
  type: Type.Literal('public-key'),
  response: Type.Object({
    clientDataJSON: bytes('clientDataJSON.'),
    attestationObject: bytes('The attestation object (its statement is never trusted).', 12_000),
    transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })),
    authenticatorData: Type.Optional(bytes('The authenticator data.', 8192)),
    publicKey: Type.Optional(bytes('The public key (SPKI).', 4096)),
    publicKeyAlgorithm: Type.Optional(Type.Integer())
  }),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  clientExtensionResults: ClientExtensions
}, { description: 'A registration response (RegistrationResponseJSON).' })

/** POST /Passkeys: the password as Mfa/Confirm takes it (a missing one is a wrong one, counted), with its device token. */
export const RegisterPasskeyBody = Type.Object({
  response: PasskeyAttestation,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '\\S', description: 'The name you know it by (default "Passkey").' })),
  password: ConfirmMfaBody.properties.password,
  deviceToken: ConfirmMfaBody.properties.deviceToken
})

export const LoginPasskeyBody = Type.Object({ response: PasskeyAssertion })

export const LoginMfaOptionsBody = Type.Object({
  mfaToken: Type.String({ minLength: 1, maxLength: 1024, description: 'The mfaToken of the Login answer.' })
})

/** Reauthenticate with passkeys on: the password (and code), or a passkey instead. */
export const ReauthenticateOrPasskeyBody = Type.Object({
  ...ReauthenticateBody.properties,
  password: Type.Optional(ReauthenticateBody.properties.password),
  passkey: Type.Optional(PasskeyAssertion)
})

/** LoginMfa with passkeys on: a code, or one of the account's passkeys instead. */
export const LoginMfaOrPasskeyBody = Type.Object({
  ...LoginMfaBody.properties,
  code: Type.Optional(mfaCode('A 6-digit code from the authenticator app, or one of the recovery codes; or send `passkey` instead.')),
  passkey: Type.Optional(PasskeyAssertion)
})

export const PasskeyReply = Type.Object({
  id: Type.String({ description: 'The credential id (base64url).' }),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  backedUp: Type.Boolean({ description: 'A synced passkey, backed up by its provider.' })
})

const Descriptor = Type.Object({ id: Type.String(), type: Type.Literal('public-key'), transports: Type.Optional(Type.Array(Type.String())) })

export const CreationOptionsReply = Type.Object({
  challenge: Type.String(),
  rp: Type.Object({ id: Type.String(), name: Type.String() }),
  user: Type.Object({ id: Type.String({ description: 'The account\'s random user handle.' }), name: Type.String(), displayName: Type.String() }),
  pubKeyCredParams: Type.Array(Type.Object({ alg: Type.Integer(), type: Type.Literal('public-key') })),
  timeout: Type.Integer(),
  excludeCredentials: Type.Array(Descriptor),
  authenticatorSelection: Type.Object({ residentKey: Type.Literal('required'), requireResidentKey: Type.Boolean(), userVerification: Type.Literal('required') }),
  attestation: Type.Literal('none'),
  extensions: Type.Object({ credProps: Type.Boolean() })
}, { description: 'PublicKeyCredentialCreationOptionsJSON: hand it to startRegistration({ optionsJSON }).' })

export const RequestOptionsReply = Type.Object({
  challenge: Type.String(),
  timeout: Type.Integer(),
  rpId: Type.String(),
  allowCredentials: Type.Array(Descriptor),
  userVerification: Type.Literal('required')
}, { description: 'PublicKeyCredentialRequestOptionsJSON: hand it to startAuthentication({ optionsJSON }).' })
