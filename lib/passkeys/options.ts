import type { FastifyBaseLogger } from 'fastify'
import type { EmitEvent } from '../common/events.js'
import { assert, group, isInteger, isObject } from '../common/option-rules.js'
import { checkStore } from '../stores/check-store.js'
import { MemoryPasskeyStore } from '../stores/memory/passkeys.js'
import type { StoreCall } from '../stores/store-call.js'
import type { AccountReads } from '../stores/account-reads.js'
import type { PasskeyStore } from '../stores/types.js'
import type { OneTimeTokens } from '../tokens/one-time-tokens.js'
import { Passkeys } from './passkeys.js'
import type { RelyingParty } from './webauthn.js'

/** The plugin options passkeys/ reads. */
export interface PasskeysPluginOptions {
  /**
   * Passkeys (WebAuthn, contract §18), off by default. `rpId`: the registrable domain the passkeys belong
   * to (e.g. 'example.com'); `rpName`: the name shown; `origins`: every exact origin a page may call WebAuthn
   * from (e.g. ['https://example.com', 'https://app.example.com']), each on `rpId` or one of its subdomains.
   * Taken from here only, never from a request's headers.
   */
  passkeys?: false | PasskeysOptions
}

export interface PasskeysOptions {
  rpId: string
  rpName: string
  origins: string[]
  /** Passkeys per account (default 10). */
  max?: number
  /** Seconds a passkey challenge (the options' `challenge`) lives (default 300). */
  ttl?: number
  /** Passkeys and user handles; default in memory (share one store between instances). */
  store?: PasskeyStore
}

export const PASSKEYS_OPTION_KEYS = ['rpId', 'rpName', 'origins', 'max', 'ttl', 'store']

export interface ResolvedPasskeys {
  rp: RelyingParty
  max: number
  ttlMs: number
  store: PasskeyStore
}

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** Checks an origin: its exact form (scheme, host, port, nothing else), https unless localhost, on rpId. */
function checkOrigin (origin: unknown, rpId: string): void {
  let url: URL | undefined
  try { url = new URL(String(origin)) } catch {}
  const exact = url !== undefined && typeof origin === 'string' && url.origin === origin
  assert(exact, `passkeys.origins: ${JSON.stringify(origin)} is not an exact origin such as 'https://example.com' (scheme, host and port, no path or trailing /)`)
  const { protocol, hostname } = url!
  assert(protocol === 'https:' || (protocol === 'http:' && (hostname === 'localhost' || hostname.endsWith('.localhost'))),
    `passkeys.origins: ${origin} must use https (browsers allow http for localhost only)`)
  assert(hostname === rpId || hostname.endsWith(`.${rpId}`), `passkeys.origins: ${origin} is not on rpId ${rpId} or one of its subdomains: browsers would refuse it`)
}

export function resolvePasskeys ({ passkeys = false }: PasskeysPluginOptions): ResolvedPasskeys | undefined {
  assert(passkeys === false || isObject(passkeys), 'passkeys must be false or { rpId, rpName, origins }')
  if (passkeys === false) return undefined
  const { rpId, rpName, origins, max = 10, ttl = 300, store } = group(passkeys, PASSKEYS_OPTION_KEYS, 'passkeys')
  if (store !== undefined) checkStore('passkeys.store', store)
  assert(isInteger(ttl, 1, 3600), 'passkeys.ttl must be a whole number of seconds from 1 to 3600')
  assert(typeof rpId === 'string' && DOMAIN.test(rpId), 'passkeys.rpId must be a lower-case domain without scheme or port, e.g. \'example.com\' or \'localhost\'')
  assert(typeof rpName === 'string' && rpName.trim() !== '' && rpName.length <= 100, 'passkeys.rpName must be a name of 1 to 100 characters')
  assert(Array.isArray(origins) && origins.length > 0, 'passkeys.origins must be a non-empty array of exact origins, e.g. [\'https://example.com\']')
  for (const origin of origins) checkOrigin(origin, rpId)
  assert(isInteger(max, 1, 100), 'passkeys.max must be a whole number from 1 to 100')
  return { rp: { id: rpId, name: rpName, origins: [...new Set(origins)] }, max, ttlMs: ttl * 1000, store: store ?? new MemoryPasskeyStore() }
}

interface Parts {
  accounts: AccountReads
  oneTimeTokens: OneTimeTokens
  storeCall: StoreCall
  emit: EmitEvent
  log: FastifyBaseLogger
}

/** Passkeys, when on. */
export function createPasskeys (resolved: ResolvedPasskeys | undefined, parts: Parts): Passkeys | undefined {
  if (resolved === undefined) return undefined
  const { rp, max, ttlMs, store } = resolved
  return new Passkeys({ ...parts, store, rp, max, ttlMs })
}
