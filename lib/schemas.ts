import { Type, type Static } from '@sinclair/typebox'
import { EMAIL_PATTERN } from './email.js'
import { WELL_FORMED_PATTERN } from './password.js'

export const MAX_PASSWORD_INPUT = 1024

export const Email = Type.String({
  pattern: EMAIL_PATTERN,
  description: 'E-mail address of a registered, active account; 3 to 254 characters after trimming.',
  examples: ['ada@example.com']
})

function password (description: string) {
  return Type.String({ minLength: 1, maxLength: MAX_PASSWORD_INPUT, pattern: WELL_FORMED_PATTERN, description })
}

export const LoginBody = Type.Object({
  email: Email,
  password: password('The account\'s password.')
})
export type LoginBody = Static<typeof LoginBody>

export const ChangePasswordBody = Type.Object({
  email: Email,
  currentPassword: password('The account\'s current password.'),
  newPassword: password('The new password; must satisfy the password policy.'),
  confirmNewPassword: password('The new password again; must equal newPassword exactly.')
})
export type ChangePasswordBody = Static<typeof ChangePasswordBody>

export const LoginReply = Type.Object({
  accessToken: Type.String({ description: 'JWT access token (typ at+jwt); send it as "Authorization: Bearer <token>".' }),
  tokenType: Type.Literal('Bearer'),
  expiresIn: Type.Integer({ description: 'Seconds until the token expires.' })
})

export const ProblemReply = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
  code: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({ pointer: Type.String(), detail: Type.String() }))),
  reasons: Type.Optional(Type.Array(Type.String()))
}, { description: 'RFC 9457 problem details (application/problem+json).' })

export const NoContent = Type.Null({ description: 'No content.' })

/** Error replies are problem+json (sent pre-serialised; the schema documents them). */
export const PROBLEM_RESPONSES = {
  '4xx': { description: 'Problem details', content: { 'application/problem+json': { schema: ProblemReply } } },
  '5xx': { description: 'Problem details', content: { 'application/problem+json': { schema: ProblemReply } } }
}
