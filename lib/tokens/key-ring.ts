import { hkdfSync } from 'node:crypto'
import type { ResolvedKey } from './keys.js'

/**
 * What rotating the signing key (a new key first in `jwt.keys`, the old ones after it) does to a derived key.
 * 'all': every configured key with secret material keeps its derived key; the first makes new values, and
 * what an older one made still checks. 'current': only the first key's; what an older key made stops working.
 */
export type Rotation = 'all' | 'current'

/**
 * Every key the plugin derives from the signing keys: who uses it, and its rotation, decided here. Each is
 * HKDF of the key's root (`ResolvedKey.rootKey`) with the label `fastify-password-auth <purpose> v1`, so
 * instances configured alike derive the same ones. Renaming a purpose changes its keys.
 */
const DERIVED_KEYS = {
  /** session/refresh-tokens.ts: every key still refreshes the sessions it started. The root itself, not derived again. */
  'refresh-token': 'all',
  /** throttle/device-tokens.ts: a rotation forgets no known device. */
  'device-token': 'all',
  /** mfa/secret-box.ts: sealed TOTP secrets, each opened by the key its kid names. */
  'mfa-secret': 'all',
  /** mfa/recovery-codes.ts: recovery codes, hashed with the first key and checked under every one. */
  'recovery-code': 'all',
  /**
   * throttle/attempt-throttle.ts (per-e-mail counters) and messages/mail-limit.ts: an e-mail is counted under
   * every key (throttle/reserve-attempt.ts reserveOnEvery), so a rotation lifts no block and no budget, and
   * instances holding the keys in another order count on the same counters.
   */
  'attempt-key': 'all',
  /** tokens/one-time-tokens.ts: reset and verification links, login challenges; made under the first key, looked up under each. */
  'one-time-token': 'all',
  /** mfa/trusted-devices.ts: devices trusted for the second factor, hashed with the first key and found under every one. */
  'trusted-device': 'all'
} as const satisfies Record<string, Rotation>

export type KeyPurpose = keyof typeof DERIVED_KEYS

export interface DerivedKey {
  /** The kid of the signing key it comes from. */
  kid: string
  key: Buffer
}

export interface DerivedKeys {
  /** The first configured key's: it makes every new value. */
  current: DerivedKey
  /** The keys that still check values, the current one first: one per key with secret material ('all'), or the current one alone. */
  all: readonly DerivedKey[]
}

/** The configured signing keys as the roots of every derived key. */
export class KeyRing {
  readonly #roots: readonly DerivedKey[]

  constructor (keys: readonly ResolvedKey[]) {
    // The first key signs, so it has secret material (resolveKeys checks it): it is the current root.
    this.#roots = keys.flatMap(({ kid, rootKey }) => rootKey === undefined ? [] : [{ kid, key: rootKey }])
  }

  /** The keys of `purpose`, as its rotation in DERIVED_KEYS keeps them. */
  derive (purpose: KeyPurpose): DerivedKeys {
    const roots = DERIVED_KEYS[purpose] === 'all' ? this.#roots : this.#roots.slice(0, 1)
    const all = roots.map(({ kid, key }) => ({ kid, key: purpose === 'refresh-token' ? key : derive(key, purpose) }))
    return { current: all[0]!, all }
  }
}

function derive (root: Buffer, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), `fastify-password-auth ${purpose} v1`, 32))
}
