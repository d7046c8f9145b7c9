import type { SessionEndReason } from '../common/events.js'

// Why a session ended is told to the host too (the session.ended event): defined with the events, below the stores.
export type { SessionEndReason }

/**
 * The account as route handlers see it on `request.account`. Hosts add their own fields by declaration
 * merging, and the included stores fill them (`MemoryAccountStore.add`, `PostgresAccountStore`'s `fields`):
 *
 * ```ts
 * declare module 'fastify-password-auth' {
 *   interface PasswordAuthAccount { displayName: string }
 * }
 * ```
 */
export interface PasswordAuthAccount {
  id: string
  /** Normalised: trimmed and lower-cased. */
  email: string
  active: boolean
  /** Advanced by every password change; tokens carrying an older version are rejected. */
  credentialVersion: number
}

/** The fields the plugin itself reads; every other field of PasswordAuthAccount is the host's own. */
export type CoreAccountField = 'id' | 'email' | 'active' | 'credentialVersion'

/** The fields hosts added to PasswordAuthAccount by declaration merging (`{}` when none). */
export type AccountFields = Omit<PasswordAuthAccount, CoreAccountField>

/** An account as the store holds it. */
export interface StoredAccount extends PasswordAuthAccount {
  /** argon2 PHC string. */
  passwordHash: string
}

export interface PasswordHashUpdate {
  id: string
  /** The update happens only if the stored hash is still this one (compare-and-set). */
  expectedHash: string
  newHash: string
  /** True for a password change (every earlier token dies); false for a rehash of the same password. */
  advanceCredentialVersion: boolean
}

/** An account a verified registration creates: active, credential version 0. */
export interface NewAccountRecord {
  /** Normalised. */
  email: string
  /** argon2id PHC string. */
  passwordHash: string
  /** The host's registration fields (registration.fields), already validated. */
  fields: Record<string, unknown>
}

export interface AccountStore {
  /** Looks an account up by its normalised e-mail address. Inactive accounts are returned too. */
  findByEmail (email: string): Promise<StoredAccount | null>
  /**
   * Looks an account up by id, without its password hash: it runs on every authenticated request and
   * becomes `request.account`. An id of another shape than the store's ids is just unknown (null).
   */
  findById (id: string): Promise<PasswordAuthAccount | null>
  /**
   * Replaces the password hash if it still equals `expectedHash`, advancing the credential version when
   * asked, atomically. Resolves true if it replaced it, false if the hash had changed or the account is gone.
   */
  updatePasswordHash (update: PasswordHashUpdate): Promise<boolean>
  /**
   * Creates an active account, or resolves null if the e-mail is taken, atomically: of two creations of one
   * address exactly one succeeds. Needed by registration only.
   */
  create? (account: NewAccountRecord): Promise<StoredAccount | null>
  /**
   * Moves the account to `newEmail` (normalised) if it still has `expectedEmail` and `expectedCredentialVersion`,
   * atomically; the credential version stays. Resolves false, changing nothing, if either moved, the account is
   * gone, or another account holds `newEmail`: of concurrent changes of one account exactly one wins. Needed by
   * e-mail change (the `account` option's `emailChange`).
   */
  updateEmail? (change: EmailUpdate): Promise<boolean>
  /** Removes the account; resolves whether it existed. Needed by account deletion (the `account` option's `deletion`). */
  delete? (id: string): Promise<boolean>
}

export interface EmailUpdate {
  id: string
  expectedEmail: string
  expectedCredentialVersion: number
  newEmail: string
}

/** The lifetimes of sessions, passed on every call so stores hold no configuration of their own. */
export interface SessionPolicy {
  /** A session whose refresh token goes unused this long ends; each refresh restarts the count. */
  idleMs: number
  /** A session ends this long after it started, whatever happens. */
  maxMs: number
  /** How long after a rotation the replaced refresh token still gets the grace answer. */
  graceMs: number
}

export interface NewSession {
  /** At least 128 random bits, base64url. */
  id: string
  accountId: string
  /** The account's credential version when the session started. */
  credentialVersion: number
  /** Names the key that authenticates the session's current refresh token (not a secret). */
  keyId: string
  /** The client's address and user agent at Login, for the host's session list. */
  ip: string
  userAgent: string
  /** Whether the account proved a second factor too (LoginMfa); stores written before it may leave it out (false). */
  mfa?: boolean
  /**
   * The access tokens' `amr` when it is not derived from `mfa` (a passkey: `["hwk", "mfa"]`, `["swk", "mfa"]`):
   * rotate() hands it back so refreshed tokens keep it. A store that leaves it out loses only that detail.
   */
  amr?: string[]
  /** Whether a trusted device stood for the second factor (contract §21); stores written before it may leave it out (false). */
  trustedDevice?: boolean
}

/** What a store knows of a live session. */
export interface SessionState {
  accountId: string
  credentialVersion: number
  /** Epoch milliseconds (store clock) of the last password proof: the session's start, or its last reauthenticate(). */
  authenticatedAt: number
  /** Whether the account proved a second factor in this session (LoginMfa, or a code since); missing means false. */
  mfa?: boolean
  /** Whether the session started from a device trusted for the second factor (contract §21); missing means false. */
  trustedDevice?: boolean
}

/** A live session as the host API lists it. Times are epoch milliseconds of the store's clock. */
export interface SessionInfo {
  id: string
  accountId: string
  createdAt: number
  /** The last Login or refresh. */
  lastUsedAt: number
  /** The last password proof: Login, or Reauthenticate. */
  authenticatedAt: number
  /** When the session ends if its refresh token is not used: the earlier of the idle and absolute limits. */
  expiresAt: number
  ip: string
  userAgent: string
  /** The session started by a Login from a device trusted for the second factor (contract §21); missing means false. */
  trustedDevice?: boolean
}

/** Where a session stands after rotate(), with times from the store's own clock. */
export interface SessionTimes {
  /** Epoch milliseconds of the session's start (part of every refresh token of the session). */
  createdAt: number
  /** Milliseconds until the session ends if its refresh token is not used. */
  expiresInMs: number
  /** Milliseconds until the session's absolute end. */
  remainingMs: number
}

export type RotationResult =
  /**
   * `generation` is the number of the session's current refresh token (the new one, or the one a grace answer
   * repeats); `amr` the session's, when it has one (NewSession.amr, reauthenticate()).
   */
  | ({ outcome: 'rotated' | 'grace', generation: number, keyId: string, amr?: string[] } & SessionState & SessionTimes)
  /** A replaced refresh token came back after the grace period, or from two or more rotations ago: the store ended the session. */
  | { outcome: 'reused', accountId: string }
  /** `unknown`: the store holds nothing of the session (never created, or forgotten after it expired or ended). */
  | { outcome: 'ended' | 'idle' | 'expired' | 'unknown' }

/**
 * Sessions and their refresh-token generations. Every method is atomic on its own: of concurrent
 * rotations of one generation exactly one rotates and the others get the grace answer; of concurrent
 * ends of one session exactly one resolves its account id. Stores never hold a refresh token: only the
 * generation counter and the name of the key that authenticates it. Time is the store's own clock.
 */
export interface SessionStore {
  /** Starts a session; resolves its times. */
  create (session: NewSession, policy: SessionPolicy): Promise<SessionTimes>
  /** A live session (not ended, not past its idle or absolute limit), or null. Runs on every authenticated request. */
  get (sessionId: string): Promise<SessionState | null>
  /**
   * Presents refresh token `generation`. The current one rotates (generation + 1, signed by `keyId`,
   * idle limit restarted); the one just replaced, within `graceMs` of its replacement, gets the current
   * generation back unchanged; any other ends the session (`reused`).
   */
  rotate (sessionId: string, generation: number, keyId: string, policy: SessionPolicy): Promise<RotationResult>
  /**
   * Records a fresh password proof on a live session (Reauthenticate): its authenticatedAt becomes the
   * store's now, which it resolves; null if the session is not live. Never revives an ended session.
   * `mfa` true also records that a second factor was proved (never cleared once set); `amr`, when given,
   * replaces the session's (a passkey's proof).
   */
  reauthenticate (sessionId: string, mfa?: boolean, amr?: string[]): Promise<number | null>
  /** Ends a live session; resolves its account id, or null if it was not live (already ended, expired, unknown). */
  end (sessionId: string, reason: SessionEndReason): Promise<string | null>
  /** Ends every live session of an account; resolves the ids it ended. */
  endAll (accountId: string, reason: SessionEndReason): Promise<string[]>
  /** The account's live sessions, oldest first. */
  list (accountId: string): Promise<SessionInfo[]>
  /**
   * Removes every record of the account's sessions, live and ended alike, and resolves the ids of those that
   * were live. Needed by account deletion: nothing of a deleted account stays behind.
   */
  forget? (accountId: string): Promise<string[]>
}

/** The per-key failure policy, passed on every call so stores hold no configuration of their own. */
export interface ThrottlePolicy {
  /** Consecutive failures allowed before the key is blocked. */
  freeFailures: number
  /** Block after the last free failure; doubles with each further failure. */
  blockMs: number
  maxBlockMs: number
  /**
   * How long an unsettled reservation counts: a process that died between reserve and settle, or a
   * cancel that never arrived. The plugin derives it from its options (see attemptLeaseMs in password/attempt-lease.ts); a verification that cannot start within half of it is shed with 503, so a verified attempt was always still counted.
   */
  leaseMs: number
  /** Failures are forgotten this long after the last one (or after the block ends, if later). */
  forgetAfterMs: number
}

export type Reservation =
  | { granted: true }
  | { granted: false, retryAfterMs: number }

/**
 * `cancel`: the attempt was not decided (a store or capacity failure, or a reserve the caller gave up
 * waiting for) and counts neither way.
 */
export type AttemptOutcome = 'success' | 'failure' | 'cancel'

/**
 * Counts password attempts per key. An attempt is reserved before the password is verified and settled
 * after, so attempts in flight count: with `f` failures recorded and `r` reservations open, a new
 * reservation is granted only if the key is not blocked and `r < max(1, freeFailures - f)`. A denial
 * carries the time left of the block, or min(1 s, leaseMs) while attempts are in flight.
 *
 * The caller names each attempt with a `ticket` it makes itself (unique, at most 64 characters), so it
 * can settle an attempt whose `reserve` it never heard back from: when `reserve` fails or times out the
 * plugin sends `settle(key, ticket, 'cancel')`, and a reservation that was made late (the store ran the
 * queued command after the caller gave up) must be released by it. A store that runs commands in order
 * per connection (Redis) gets this for free, since the cancel is queued behind the reserve; otherwise a
 * late reservation counts until its lease ends. Reserving the same ticket twice holds one slot.
 *
 * Keys are opaque to the store: HMACs of e-mail addresses, and `device.<id>` for known devices (each
 * device its own counter, with the same rules). A key of an account's own that only the account can name
 * again (a known device's counters) carries the account's group before a slash: `<group>/<rest>`, so that
 * clearGroup() can forget them all when the account is deleted.
 */
export interface AttemptStore {
  reserve (key: string, ticket: string, policy: ThrottlePolicy): Promise<Reservation>
  /**
   * Ends a reservation with its outcome. Resolves the milliseconds of the block that this failure
   * started (0 when it started none, and for a success or a cancel): the plugin tells the host once per
   * block (event `login.blocked`). A store that resolves nothing works, without those events.
   */
  settle (key: string, ticket: string, outcome: AttemptOutcome, policy: ThrottlePolicy): Promise<number | void>
  /** Forgets the key: its failures, its block and its open reservations. Needed by `admin.unblock` and account deletion. */
  clear? (key: string): Promise<void>
  /**
   * Forgets every key `<group>/…` (failures, blocks, open reservations), and no other. Needed by account deletion:
   * without it an account's device counters are left to expire by themselves.
   */
  clearGroup? (group: string): Promise<void>
}

/**
 * What a one-time token (a password-reset link now; e-mail verification and second-factor challenges
 * later) stands for. The token itself never reaches a store: only its keyed hash does.
 */
export interface OneTimeToken {
  /** What the token may be used for (the plugin's: PURPOSE in tokens/purposes.ts); a token of another purpose is unknown. */
  purpose: string
  accountId: string
  /** The account's normalised e-mail when the token was issued: a change of address kills the token. */
  email: string
  /** The account's credential version when the token was issued: a password change kills the token. */
  credentialVersion: number
  /** A pending registration's argon2id hash (verify_email; accountId is then '' and credentialVersion 0). */
  passwordHash?: string
  /** A pending registration's fields of yours (registration.fields). */
  fields?: Record<string, unknown>
}

/**
 * One-time tokens, one per `slot` (the plugin derives a slot per account and purpose, so a new token
 * replaces the account's earlier one). Every method is atomic; times are the store's own clock.
 */
export interface OneTimeTokenStore {
  /** Puts a token (its keyed `hash`) in `slot`, replacing whatever the slot held; it lives `ttlMs`. */
  put (slot: string, hash: string, token: OneTimeToken, ttlMs: number): Promise<void>
  /** The live token in `slot` if its hash is `hash` and its purpose `purpose`; nothing changes. */
  find (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null>
  /** Removes and resolves that same token: of concurrent callers exactly one gets it, the others null. */
  consume (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null>
  /** Removes whatever `slot` holds. Needed by account deletion: the account's tokens go with it. */
  remove? (slot: string): Promise<void>
  /**
   * Removes every token whose accountId is `accountId`, whatever its slot (login and passkey challenges, revert
   * links of every address the account left). Needed by account deletion: without it those are left to expire.
   */
  removeAll? (accountId: string): Promise<void>
  /**
   * Removes and resolves the token like consume(), for tokens that stand together (an account's e-mail revert links,
   * one per address it left, contract §19): only while no other live token of its account and purpose expires before
   * it (the earliest-issued one works first), and with every other token of that account and purpose, atomically: of
   * concurrent calls on tokens of one account and purpose at most one resolves a token. Null for anything else, and
   * for a token of no account. Needed by e-mail change.
   */
  consumeFirst? (slot: string, hash: string, purpose: string): Promise<OneTimeToken | null>
  /** The live tokens of the account and purpose, in any order (the addresses an account left, for its deletion notice). Needed by e-mail change. */
  list? (accountId: string, purpose: string): Promise<OneTimeToken[]>
}

/** An account's second factor as the store holds it: nothing in it yields a code without the server's keys. */
export interface StoredMfa {
  /** The TOTP secret, encrypted by the plugin (opaque to the store). */
  secret: string
  /** False while a Setup waits for its Confirm. */
  enabled: boolean
  /** The last TOTP time step accepted (0: none): a step at or below it is refused. */
  lastStep: number
  /** Keyed hashes of the unused recovery codes. */
  recoveryCodes: string[]
}

/**
 * Second factors, one record per account. Every method is atomic on its own: of concurrent acceptStep()
 * calls with one step exactly one resolves true, and of concurrent useRecoveryCode() calls with one code
 * exactly one resolves true.
 */
export interface MfaStore {
  get (accountId: string): Promise<StoredMfa | null>
  /** Stores a pending set-up (enabled false, no recovery codes), replacing a pending one; false, changing nothing, if two factors are on. */
  begin (accountId: string, secret: string): Promise<boolean>
  /** Turns on the pending set-up whose secret is `secret`, with `lastStep` accepted and these recovery codes; false if there is no such pending set-up. */
  enable (accountId: string, secret: string, lastStep: number, recoveryCodes: string[]): Promise<boolean>
  /** Records `step` as accepted if two factors are on and it is above the last accepted step; false otherwise. */
  acceptStep (accountId: string, step: number): Promise<boolean>
  /** Removes one recovery code whose hash is among `hashes` (two factors on); false if none is there. */
  useRecoveryCode (accountId: string, hashes: string[]): Promise<boolean>
  /** Replaces the recovery codes while two factors are on; false if they are off. */
  replaceRecoveryCodes (accountId: string, recoveryCodes: string[]): Promise<boolean>
  /** Removes the account's record, on or pending; true if two factors were on. */
  disable (accountId: string): Promise<boolean>
  /**
   * Every record's sealed secret (on or pending), in any order, for `passwordAuth.reseal()`: records added or
   * removed meanwhile may or may not be listed.
   */
  secrets (): AsyncIterable<{ accountId: string, secret: string }>
  /** Replaces the record's sealed secret `secret` with `resealed` (compare-and-set, nothing else changes); false if it no longer holds `secret`. */
  reseal (accountId: string, secret: string, resealed: string): Promise<boolean>
}

/**
 * One of an account's security events as the activity store keeps it (contract §22): the plugin's event without
 * its type, time, request and address repeated in `details`. Events never carry a password, a hash or a token.
 */
export interface ActivityRecord {
  type: string
  /** Epoch milliseconds. */
  time: number
  accountId: string
  requestId?: string
  ip?: string
  /** The rest of the event (e-mail, reason, route, session id, acting admin…), as JSON. */
  details: Record<string, unknown>
}

/** The accounts' recent security events, for `fastify.passwordAuth.admin.activity(id)`. */
export interface ActivityStore {
  add (record: ActivityRecord): Promise<void>
  /** The account's records newer than the store's retention, newest first, at most `limit`. */
  list (accountId: string, limit: number): Promise<ActivityRecord[]>
  /** Removes every record of the account (account deletion). */
  forget (accountId: string): Promise<void>
}

/**
 * A passkey (WebAuthn credential) as the store holds it: public material only. Nothing in it signs in:
 * the private key never leaves the user's authenticator.
 */
export interface StoredPasskey {
  /** The credential id, base64url; unique across every account. */
  id: string
  accountId: string
  /** The COSE public key, base64url. */
  publicKey: string
  /** The signature counter last accepted (0: the authenticator keeps none). */
  counter: number
  /** Backup eligible: a synced passkey (its counter is no hard gate); false for a device-bound one. */
  backupEligible: boolean
  /** Backed up, as last reported. */
  backedUp: boolean
  /** The transports the browser reported at registration (hints for the next sign-in). */
  transports: string[]
  /** The owner's name for it, 1 to 64 characters. */
  name: string
  /** Epoch milliseconds. */
  createdAt: number
  /** Epoch milliseconds of the last accepted use; null before the first. */
  lastUsedAt: number | null
}

/**
 * What add() did: `duplicate` when the credential id is stored already (for any account), `limit` when the account has
 * `max`, `outrun` when the account's generation is no longer the one the caller read (its passkeys were removed since).
 */
export type PasskeyAddResult = 'added' | 'duplicate' | 'limit' | 'outrun'

/**
 * Passkeys and the accounts' WebAuthn user handles. Every method is atomic on its own: a credential id is
 * stored once across all accounts, an account never passes `max` passkeys (of concurrent adds, only as many
 * as fit), and of concurrent use() calls with one expected counter exactly one resolves true.
 *
 * Each account has a generation (0 before any): removeAll() advances it, atomically with the removal, and add()
 * stores a passkey only while the generation is still the one the caller read before it checked anything. So a
 * removal that lands while a registration is in flight wins: the late passkey is never stored, or is removed with
 * the others (contract §18).
 */
export interface PasskeyStore {
  /** The account's user handle: `candidate` stored if the account has none yet, else the one stored (made once). */
  userHandle (accountId: string, candidate: string): Promise<string>
  /** The account's current generation (0 before any removeAll). */
  generation (accountId: string): Promise<number>
  /**
   * Stores a new passkey, unless its id is taken (by any account), the account already has `max`, or the account's
   * generation is no longer `generation` (a compare-and-set: `outrun`, nothing stored that signs in).
   */
  add (passkey: StoredPasskey, max: number, generation: number): Promise<PasskeyAddResult>
  /** The passkey with this credential id, whoever owns it; null if none. */
  get (credentialId: string): Promise<StoredPasskey | null>
  /** The account's passkeys, oldest first. */
  list (accountId: string): Promise<StoredPasskey[]>
  /**
   * Records a use: the counter becomes `counter` and lastUsedAt `usedAt`, if the stored counter is still
   * `expectedCounter` (compare-and-set) and the passkey still exists; false otherwise.
   */
  use (credentialId: string, expectedCounter: number, counter: number, backedUp: boolean, usedAt: number): Promise<boolean>
  /** Removes one of the account's passkeys; false if the account has no passkey with this id (another's included). */
  remove (accountId: string, credentialId: string): Promise<boolean>
  /**
   * Removes every passkey of the account and advances its generation, atomically (also when it has none: an add
   * in flight with the older generation is refused); resolves how many were removed.
   */
  removeAll (accountId: string): Promise<number>
  /**
   * Removes every passkey of the account, its user handle and its generation; resolves how many passkeys. Needed
   * by account deletion: without it the handle (which names nobody without the account) stays behind.
   */
  forget? (accountId: string): Promise<number>
}

/** A device trusted for an account's second factor (contract §21), as the owner's list shows it. Times are epoch milliseconds of the store's clock. */
export interface TrustedDeviceInfo {
  /** Random and public: names the trust in the owner's list and in its removal. */
  id: string
  /** What a person reads ("Chrome on macOS"). */
  label: string
  createdAt: number
  /** When the trust ends by itself. */
  trustedUntil: number
  /** Its last Login without a code (its creation until then). */
  lastUsedAt: number
}

/** A trust to store: the public id, a keyed hash of the device (worthless without the server's keys), the label. */
export interface NewTrustedDevice {
  id: string
  deviceHash: string
  label: string
}

/**
 * Devices trusted for an account's second factor (contract §21). Each account has a generation (0 before
 * any), and each trust carries the generation it was made in: only a trust of the account's current
 * generation, and not past `trustedUntil`, is live. endAll() advances the generation atomically, so it ends
 * every trust at once, including one a concurrent trust() was writing with the generation it read before.
 * The store holds keyed hashes of devices, never a device token. Times are the store's own clock.
 */
export interface TrustedDeviceStore {
  /** The account's current generation. */
  generation (accountId: string): Promise<number>
  /**
   * Trusts a device for `ttlMs`, made in `generation` (read with generation() before the caller checked
   * anything). A live trust of the same deviceHash is replaced. Resolves false, storing nothing live, when
   * the account's generation is no longer `generation`.
   */
  trust (accountId: string, device: NewTrustedDevice, ttlMs: number, generation: number): Promise<boolean>
  /** The live trust whose deviceHash is one of `deviceHashes`, its lastUsedAt moved to now; null if there is none. */
  use (accountId: string, deviceHashes: string[]): Promise<{ id: string, generation: number } | null>
  /** The account's live trusts, oldest first. */
  list (accountId: string): Promise<TrustedDeviceInfo[]>
  /** Ends one live trust of the account; false if it has no live trust with that id. */
  remove (accountId: string, id: string): Promise<boolean>
  /** Ends every trust of the account: advances its generation by one, atomically; resolves the new generation. */
  endAll (accountId: string): Promise<number>
  /**
   * Removes everything of the account: every trust and its generation. Needed by account deletion (a deleted
   * account's id never comes back, so its generation need not outlive it).
   */
  forget? (accountId: string): Promise<void>
}
