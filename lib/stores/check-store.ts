import { assert } from '../common/option-rules.js'

/** The methods each store option needs: one missing fails at registration, not as a TypeError on a request. */
const STORE_METHODS = {
  accounts: ['findByEmail', 'findById', 'updatePasswordHash'],
  sessions: ['create', 'get', 'rotate', 'reauthenticate', 'end', 'endAll', 'list'],
  attempts: ['reserve', 'settle'],
  oneTimeTokens: ['put', 'find', 'consume'],
  'mfa.store': ['get', 'begin', 'enable', 'acceptStep', 'useRecoveryCode', 'replaceRecoveryCodes', 'disable', 'secrets', 'reseal'],
  'admin.activity': ['add', 'list', 'forget'],
  'passkeys.store': ['userHandle', 'generation', 'add', 'get', 'list', 'use', 'remove', 'removeAll'],
  'mfa.trustedDevices': ['generation', 'trust', 'use', 'list', 'remove', 'endAll']
} as const

/** Checks the store given as option `name`. */
export function checkStore (name: keyof typeof STORE_METHODS, store: unknown): void {
  assert(typeof store === 'object' && store !== null, `the "${name}" store is required`)
  for (const method of STORE_METHODS[name]) {
    assert(typeof (store as Record<string, unknown>)[method] === 'function', `the "${name}" store has no method ${method}()`)
  }
}
