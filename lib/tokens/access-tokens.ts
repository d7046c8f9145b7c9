import { requestError } from '../common/errors.js'
import { randomId } from '../common/random-id.js'
import type { EngineChecks, KeyEngine } from './jwt-engine.js'
import type { JwtAlgorithm, ResolvedKey } from './keys.js'

interface Entry<T> {
  /** The whole text of the token: a lookup by signature is a hit only if the rest matches too. */
  token: string
  claims: T
  /** Epoch ms: valid from (nbf) … until (exp), both inclusive, as fast-jwt checks them. */
  from: number
  until: number
}

/** Longer tokens are verified every time, so the cache stays small whatever the claims hold. */
const MAX_TOKEN_LENGTH = 4096

/** The token's last segment (its signature): the key it is held under. */
const signatureOf = (token: string): string => token.slice(token.lastIndexOf('.') + 1)

/**
 * Access tokens that verified, by their exact text, with their claims: a client sending the same token
 * again skips the signature check and the JSON parsing, but never the clock (exp and nbf are checked on
 * every hit). Only verified tokens get in, so forged ones cannot push them out; at most `size` are held
 * (the oldest leaves first), each at most 4 KiB of text. It stands in front of @fastify/jwt, in place of
 * fast-jwt's cache (its `verify.cache` option), which hashes every token with SHA-256 to find it (a third of a
 * cached verification) and stores failures too, so forged tokens push verified ones out.
 *
 * Entries are found by the signature segment and then compared whole: a Map hashes its string keys, and hashing
 * the whole token (about 380 characters, a new string on every request) cost 0.5 µs, on every miss too (Logout's
 * fresh tokens), against 0.2 µs for the signature.
 */
export class VerifiedTokens<T extends { exp: number, nbf?: unknown }> {
  readonly size: number
  readonly #entries = new Map<string, Entry<T>>()

  constructor (size: number) {
    this.size = size
  }

  /** The claims of a token verified before that is still within its lifetime at `now`. */
  get (token: string, now: number): T | undefined {
    if (this.#entries.size === 0) return undefined
    const entry = this.#entries.get(signatureOf(token))
    return entry !== undefined && entry.token === token && now >= entry.from && now <= entry.until ? entry.claims : undefined
  }

  /** Remembers a token that just verified; its claims are frozen, since every hit shares them. */
  add (token: string, claims: T): T {
    if (token.length > MAX_TOKEN_LENGTH || this.size === 0) return claims
    if (this.#entries.size >= this.size) this.#entries.delete(this.#entries.keys().next().value!)
    const from = typeof claims.nbf === 'number' ? claims.nbf * 1000 : -Infinity
    this.#entries.set(signatureOf(token), { token, claims: Object.freeze(claims), from, until: claims.exp * 1000 })
    return claims
  }
}

export type { JwtAlgorithm }

export interface AccessTokenConfig {
  issuer: string
  audience: string
  /** Seconds. */
  expiresIn: number
}

/**
 * The claims of an accepted access token. `cv` is the account's credential version, `sid` its session,
 * `amr` how the session was authenticated (RFC 8176): `["pwd"]`, or `["pwd", "otp", "mfa"]` with a second factor, or
 * `["pwd", "mfa"]` when a device trusted for it stood for the code.
 */
export interface AccessTokenClaims {
  sub: string
  sid: string
  jti: string
  cv: number
  amr?: string[]
  iat: number
  exp: number
  iss: string
  aud: string
}

export interface IssuedAccessToken {
  accessToken: string
  tokenType: 'Bearer'
  /** Seconds. */
  expiresIn: number
}

export interface AccessTokenSubject {
  accountId: string
  sessionId: string
  credentialVersion: number
  /** Whether the session proved a second factor. */
  mfa?: boolean
  /** The `amr` claim when it is not the password's (a passkey: `["hwk", "mfa"]` or `["swk", "mfa"]`). */
  amr?: readonly string[]
  /** Whether a device trusted for the second factor stood for it (contract §21): `amr` is then ["pwd", "mfa"]. */
  trustedDevice?: boolean
}

const AMR_PASSWORD = Object.freeze(['pwd'])
const AMR_MFA = Object.freeze(['pwd', 'otp', 'mfa'])
const AMR_TRUSTED_DEVICE = Object.freeze(['pwd', 'mfa'])

const TOKEN_TYPE = 'at+jwt'
const REQUIRED_CLAIMS = ['iss', 'aud', 'sub', 'sid', 'jti', 'iat', 'exp', 'cv']
const HEADER_FIELDS = ['alg', 'typ', 'kid']
/** Verified tokens remembered (by their exact text, until their exp): each at most 4 KiB, typically under 1 MB in all. */
const VERIFIED_CACHE_SIZE = 1000

type Verify = (token: string) => Record<string, unknown>

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
const isText = (value: unknown): value is string => typeof value === 'string' && value !== ''

/** The checks every key's @fastify/jwt registration verifies with (jwt-engine.ts). */
export function engineChecks ({ issuer, audience }: AccessTokenConfig): EngineChecks {
  return { issuer, audience, type: TOKEN_TYPE, requiredClaims: REQUIRED_CLAIMS }
}

/**
 * Issues and verifies access tokens through each key's @fastify/jwt (jwt-engine.ts), synchronously: no
 * libuv thread-pool work on the authenticated path. A token is verified only with the key its `kid` names,
 * with that key's algorithm; its header may carry nothing but `alg`, `typ` and `kid`.
 */
export class AccessTokens {
  readonly expiresIn: number
  readonly #sign: (payload: Record<string, unknown>) => string
  /** The exact header segment the plugin issues with each key: the common case needs no header parsing. */
  readonly #byHeader = new Map<string, Verify>()
  readonly #byKid = new Map<string, { algorithm: JwtAlgorithm, verify: Verify }>()
  readonly #verified = new VerifiedTokens<AccessTokenClaims>(VERIFIED_CACHE_SIZE)

  /** `engines[i]` signs and verifies with `keys[i]`, registered with `engineChecks(config)`; the first key signs. */
  constructor (keys: readonly ResolvedKey[], engines: readonly KeyEngine[], { expiresIn }: AccessTokenConfig) {
    this.expiresIn = expiresIn
    this.#sign = engines[0]!.sign!
    for (const [index, key] of keys.entries()) {
      const { verify } = engines[index]!
      this.#byHeader.set(base64url({ alg: key.algorithm, typ: TOKEN_TYPE, kid: key.kid }), verify)
      this.#byKid.set(key.kid, { algorithm: key.algorithm, verify })
    }
  }

  /** A token for the subject, expiring after `expiresIn` or at `notAfterMs` (the session's end), whichever is first. */
  issue ({ accountId, sessionId, credentialVersion, mfa = false, trustedDevice = false, amr }: AccessTokenSubject, notAfterMs = Infinity): IssuedAccessToken {
    const iat = Math.floor(Date.now() / 1000)
    const exp = Math.min(iat + this.expiresIn, Math.floor(notAfterMs / 1000))
    const accessToken = this.#sign({ sub: accountId, sid: sessionId, jti: randomId(), cv: credentialVersion, amr: amr ?? (trustedDevice ? AMR_TRUSTED_DEVICE : mfa ? AMR_MFA : AMR_PASSWORD), iat, exp })
    return { accessToken, tokenType: 'Bearer', expiresIn: exp - iat }
  }

  /**
   * The claims of a token whose header, signature and claims check out; throws 401 otherwise. `remember`
   * false: a token about to be spent (Logout) is not worth a place among the verified ones.
   */
  verify (token: string, { remember = true } = {}): AccessTokenClaims {
    const known = this.#verified.get(token, Date.now())
    if (known !== undefined) return known
    const dot = token.indexOf('.')
    const verify = this.#byHeader.get(token.slice(0, dot)) ?? this.#verifierFromHeader(token.slice(0, dot))
    let claims: Record<string, unknown>
    try {
      claims = verify(token)
    } catch {
      throw requestError('FST_PWAUTH_TOKEN_INVALID')
    }
    if (!isText(claims.sub) || !isText(claims.sid) || !isText(claims.jti) || !Number.isSafeInteger(claims.cv)) {
      throw requestError('FST_PWAUTH_TOKEN_INVALID')
    }
    return remember ? this.#verified.add(token, claims as unknown as AccessTokenClaims) : claims as unknown as AccessTokenClaims
  }

  /** A header serialised otherwise than the plugin does it (another JSON encoder): exactly alg, typ and a known kid. */
  #verifierFromHeader (segment: string): Verify {
    let header: Record<string, unknown>
    try {
      header = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
    } catch {
      throw requestError('FST_PWAUTH_TOKEN_INVALID')
    }
    const key = typeof header?.kid === 'string' ? this.#byKid.get(header.kid) : undefined
    const names = typeof header === 'object' && header !== null ? Object.keys(header) : []
    if (key === undefined || header.alg !== key.algorithm || names.length !== HEADER_FIELDS.length ||
        !names.every((name) => HEADER_FIELDS.includes(name))) {
      throw requestError('FST_PWAUTH_TOKEN_INVALID')
    }
    return key.verify
  }
}
