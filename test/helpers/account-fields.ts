// The host-side declaration merging the account-field tests use. Optional fields, so the other tests'
// accounts (which have none) still type-check in the same program.
declare module '../../lib/stores/types.js' {
  interface PasswordAuthAccount {
    displayName?: string
    plan?: string
  }
}

export const ADA_FIELDS = Object.freeze({ displayName: 'Ada Lovelace', plan: 'pro' })
