import { assert, group, isInteger } from '../common/option-rules.js'
import { checkStore } from '../stores/check-store.js'
import { MemoryActivityStore } from '../stores/memory/activity.js'
import type { AccountStore, ActivityStore, AttemptStore, OneTimeTokenStore, PasswordAuthAccount, SessionStore } from '../stores/types.js'

/** What the host's beforeDelete answers: nothing (or `true`) lets the deletion go on; `{ refuse }` stops it with that detail. */
export type BeforeDeleteAnswer = void | undefined | true | { refuse: string }

/** The plugin options account/ reads (contract §19, §22). */
export interface AccountPluginOptions {
  /** Account self-service routes, off unless turned on. */
  account?: {
    /**
     * POST /ChangeEmail, /VerifyEmailChange, /RevertEmailChange (default false); needs deliver, an account store with
     * updateEmail() and a one-time-token store with consumeFirst() and list().
     */
    emailChange?: boolean
    /** Seconds the link sent to the new address lives (default 86400). */
    verifyTtl?: number
    /** Seconds the revert link sent to the old address lives (default 604800, 7 days). */
    revertTtl?: number
    /** POST /DeleteAccount (default false); needs a store with delete(), and session, one-time-token and attempt stores that can forget. */
    deletion?: boolean
    /** Asked before a deletion: answer `{ refuse: 'why' }` to stop it (409 DELETE_REFUSED with your detail). */
    beforeDelete?: (account: PasswordAuthAccount) => BeforeDeleteAnswer | Promise<BeforeDeleteAnswer>
    /** GET /Account/Export (default false). */
    export?: boolean
    /** What your app holds of the account, answered under `host` by Export (JSON). */
    exportData?: (account: PasswordAuthAccount) => unknown
  }
  /** fastify.passwordAuth.admin's settings. */
  admin?: {
    /** Where the accounts' security events are kept for admin.activity() (default: a ring of 10000 in memory). */
    activity?: ActivityStore
  }
}

export interface EmailChangeRoutes {
  /** The link to the new address lives this long (account.verifyTtl). */
  verifyTtlMs: number
  revertTtlMs: number
}

export interface DeletionRoutes {
  beforeDelete: NonNullable<NonNullable<AccountPluginOptions['account']>['beforeDelete']> | undefined
}

export interface ExportRoutes {
  exportData: NonNullable<AccountPluginOptions['account']>['exportData']
}

export interface ResolvedAccount {
  emailChange: EmailChangeRoutes | undefined
  deletion: DeletionRoutes | undefined
  export: ExportRoutes | undefined
  activity: ActivityStore
  /** What the stores lack for deleting an account (admin.deleteAccount says it), or undefined. */
  deletionNeeds: string | undefined
}

export const ACCOUNT_KEYS = ['emailChange', 'verifyTtl', 'revertTtl', 'deletion', 'beforeDelete', 'export', 'exportData']

interface Context {
  canDeliver: boolean
  accounts: AccountStore
  stores: { sessions: SessionStore, oneTimeTokens: OneTimeTokenStore, attempts: AttemptStore }
}

/** Checks the account and admin options; a route that is on gets its settings, one that is off undefined. */
export function resolveAccount ({ account, admin }: AccountPluginOptions, { canDeliver, accounts, stores }: Context): ResolvedAccount {
  const options = group(account, ACCOUNT_KEYS, 'account')
  const { emailChange = false, verifyTtl = 86_400, revertTtl = 604_800, deletion = false, beforeDelete, export: exportRoute = false, exportData } = options
  assert(typeof emailChange === 'boolean', 'account.emailChange must be true or false')
  assert(typeof deletion === 'boolean', 'account.deletion must be true or false')
  assert(typeof exportRoute === 'boolean', 'account.export must be true or false')
  assert(isInteger(verifyTtl, 1, 30 * 86_400), 'account.verifyTtl must be a whole number of seconds from 1 to 2592000 (30 days)')
  assert(isInteger(revertTtl, 1, 30 * 86_400), 'account.revertTtl must be a whole number of seconds from 1 to 2592000 (30 days)')
  assert(beforeDelete === undefined || typeof beforeDelete === 'function', 'account.beforeDelete must be a function (account) => undefined | { refuse }')
  assert(exportData === undefined || typeof exportData === 'function', 'account.exportData must be a function (account) => data')
  if (emailChange) {
    assert(canDeliver, 'account.emailChange needs deliver: the plugin has no other way to send the link to the new address')
    assert(typeof accounts.updateEmail === 'function', 'account.emailChange needs an account store with updateEmail() (MemoryAccountStore and PostgresAccountStore have it)')
    // A revert ends the account's other revert links (consumeFirst); a deletion is told to the addresses it left (list).
    assert(typeof stores.oneTimeTokens.consumeFirst === 'function' && typeof stores.oneTimeTokens.list === 'function',
      'account.emailChange needs a one-time-token store with consumeFirst() and list() (the included stores have them)')
  }
  const missing = deletionNeeds(accounts, stores)
  assert(!deletion || missing === undefined, `account.deletion needs ${missing ?? ''}`)
  const { activity } = group(admin, ['activity'], 'admin')
  if (activity !== undefined) checkStore('admin.activity', activity)
  return {
    emailChange: emailChange ? { verifyTtlMs: verifyTtl * 1000, revertTtlMs: revertTtl * 1000 } : undefined,
    deletion: deletion ? { beforeDelete } : undefined,
    export: exportRoute ? { exportData } : undefined,
    activity: activity ?? new MemoryActivityStore(),
    deletionNeeds: missing
  }
}

/** What the stores lack for a deletion (DeleteAccount's or the admin's), or undefined: nothing of it may stay behind. */
function deletionNeeds (accounts: AccountStore, stores: Context['stores']): string | undefined {
  if (typeof accounts.delete !== 'function') return 'an account store with delete() (MemoryAccountStore and PostgresAccountStore have it)'
  if (typeof stores.sessions.forget !== 'function') return 'a session store with forget() (the included stores have it)'
  if (typeof stores.oneTimeTokens.remove !== 'function') return 'a one-time-token store with remove() (the included stores have it)'
  if (typeof stores.attempts.clear !== 'function') return 'an attempt store with clear() (the included stores have it)'
  return undefined
}
