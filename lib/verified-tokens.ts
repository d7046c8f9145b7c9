interface Entry<T> {
  claims: T
  /** Epoch ms: valid from (nbf) … until (exp), both inclusive, as fast-jwt checks them. */
  from: number
  until: number
}

/** Longer tokens are verified every time, so the cache stays small whatever the claims hold. */
const MAX_TOKEN_LENGTH = 4096

/**
 * Access tokens that verified, by their exact text, with their claims: a client sending the same token
 * again skips the signature check and the JSON parsing, but never the clock (exp and nbf are checked on
 * every hit). Only verified tokens get in, so forged ones cannot push them out; at most `size` are held
 * (the oldest leaves first), each at most 4 KiB of text. This replaces fast-jwt's own cache, which
 * hashes every token with SHA-256 to find it (a third of a cached verification) and stores failures too.
 */
export class VerifiedTokens<T extends { exp: number, nbf?: unknown }> {
  readonly size: number
  readonly #entries = new Map<string, Entry<T>>()

  constructor (size: number) {
    this.size = size
  }

  /** The claims of a token verified before that is still within its lifetime at `now`. */
  get (token: string, now: number): T | undefined {
    const entry = this.#entries.get(token)
    return entry !== undefined && now >= entry.from && now <= entry.until ? entry.claims : undefined
  }

  /** Remembers a token that just verified; its claims are frozen, since every hit shares them. */
  add (token: string, claims: T): T {
    if (token.length > MAX_TOKEN_LENGTH || this.size === 0) return claims
    if (this.#entries.size >= this.size) this.#entries.delete(this.#entries.keys().next().value!)
    const from = typeof claims.nbf === 'number' ? claims.nbf * 1000 : -Infinity
    this.#entries.set(token, { claims: Object.freeze(claims), from, until: claims.exp * 1000 })
    return claims
  }
}
