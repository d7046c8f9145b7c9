import type { AccountStore, ActivityStore, AttemptStore, MfaStore, OneTimeTokenStore, PasskeyStore, SessionStore, TrustedDeviceStore } from '../../lib/index.js'
import type { AccountSeed } from '../accounts-file.js'

/** The stores the example server runs on, and what it needs to manage them. */
export interface ServerStores {
  accounts: AccountStore
  sessions: SessionStore
  /** Shared per-e-mail counters; undefined means the plugin's in-memory default. */
  attempts?: AttemptStore
  /** Shared one-time tokens (reset links); undefined means the plugin's in-memory default. */
  oneTimeTokens?: OneTimeTokenStore
  /** Second factors: with the accounts, in the durable store (a Redis that lost them would turn them off). */
  mfa: MfaStore
  /** Passkeys: with the accounts, in the durable store, for the same reason. */
  passkeys: PasskeyStore
  /** The accounts' security events for admin.activity(); undefined means the plugin's in-memory ring. */
  activity?: ActivityStore
  /** Devices trusted for the second factor: shared by the API's registration and the browser app's (Redis when there is one). */
  trustedDevices: TrustedDeviceStore
  /** An ioredis client for the per-IP limit, so instances share it. */
  rateLimitRedis?: object
  /** Adds accounts that do not exist yet (idempotent). `passwordHash` is already computed. */
  seed: (accounts: Array<AccountSeed & { passwordHash: string }>) => Promise<void>
  /** Settings of a backing service that weaken the guarantees, to log once at start. */
  warnings?: () => Promise<string[]>
  /** Rejects when a backing service is unreachable. */
  healthCheck: () => Promise<void>
  close: () => Promise<void>
}

export type StoreLogger = (message: string, err: unknown) => void
