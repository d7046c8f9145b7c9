/**
 * A password-hash format of another system, verified at Login and ChangePassword until the first
 * successful login replaces the hash with argon2id.
 */
export interface LegacyHashFormat {
  /** Names the format in events and option errors, e.g. 'php-sha1'. Never a hash. */
  name: string
  /** True when `hash` is in this format. Synchronous and cheap: it runs before any verification. */
  test: (hash: string) => boolean
  /**
   * Resolves true when `password` matches `hash`. Runs on the event loop's thread, holding a place of
   * the plugin's bounded hashing queue, so keep the work off the event loop (a native or thread-pool API,
   * never a `*Sync` one). Rejecting fails the request with 503.
   */
  verify: (hash: string, password: string) => Promise<boolean>
}

/**
 * Verifies a password against a hash in a format the plugin knows itself. Synchronous: it runs inside a
 * hashing worker (password/hash-worker.ts), a thread that does nothing else, so blocking it is the point.
 */
export type VerifyBuiltIn = (hash: string, password: string) => boolean

/** Thrown by a built-in format that cannot run here (an optional dependency is not installed). */
export class HashFormatUnavailableError extends Error {
  readonly code: string | undefined

  constructor (message: string, code?: string) {
    super(message)
    this.code = code
  }
}
