/** What GET /me answers: the account's own fields, serialised by a compiled schema (nothing else can leak). */
export const Account = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    active: { type: 'boolean' },
    credentialVersion: { type: 'integer' }
  },
  required: ['id', 'email', 'active', 'credentialVersion'],
  additionalProperties: false
} as const
