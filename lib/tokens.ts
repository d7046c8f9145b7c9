import { randomBytes } from 'node:crypto'
import type { FastifyJWTOptions } from '@fastify/jwt'
import { requestError } from './errors.js'
import type { PasswordAuthAccount } from './stores/types.js'

export type JwtAlgorithm = 'HS256' | 'EdDSA' | 'ES256'

export interface TokenConfig {
  algorithm: JwtAlgorithm
  /** HS256 secret, or the private and public key (PEM) of a key pair. */
  key: { secret: string | Buffer } | { privateKey: string | Buffer, publicKey: string | Buffer }
  issuer: string
  audience: string
  /** Seconds. */
  expiresIn: number
}

/** The claims of an accepted access token. `cv` is the account's credential version. */
export interface AccessTokenClaims {
  sub: string
  jti: string
  cv: number
  iat: number
  exp: number
  iss: string
  aud: string
}

/**
 * The part of @fastify/jwt's decorator we use. Declared here so that no @fastify/jwt type, and with it
 * its `fastify.jwt` augmentation, reaches the host's types through ours.
 */
export interface JwtSignerVerifier {
  sign (payload: Record<string, unknown>): string
  verify<T> (token: string): T
}

export interface IssuedToken {
  accessToken: string
  tokenType: 'Bearer'
  expiresIn: number
}

const TOKEN_TYPE = 'at+jwt'
// Tokens are issued with exactly these header parameters; jku, x5u, jwk, kid … make a token invalid.
const ALLOWED_HEADER = new Set(['alg', 'typ'])

/**
 * Options for @fastify/jwt: one pinned algorithm, `typ`, `iss`, `aud` and the claims we rely on.
 * The namespace keeps its decorators apart from a host's own @fastify/jwt, registered before or after.
 */
export function jwtPluginOptions (config: TokenConfig) {
  const { key, algorithm, issuer, audience, expiresIn } = config
  return {
    namespace: 'fastifyPasswordAuth',
    secret: 'secret' in key ? key.secret : { private: key.privateKey, public: key.publicKey },
    // @fastify/jwt takes a numeric expiresIn as seconds.
    sign: { algorithm, expiresIn, iss: issuer, aud: audience, header: { alg: algorithm, typ: TOKEN_TYPE } },
    verify: {
      algorithms: [algorithm],
      allowedIss: issuer,
      allowedAud: audience,
      checkTyp: TOKEN_TYPE,
      requiredClaims: ['sub', 'jti', 'iat', 'exp', 'cv'],
      complete: true
    }
  } satisfies FastifyJWTOptions
}

/** Issues and verifies access tokens. Everything here is synchronous: no libuv thread-pool work. */
export class TokenService {
  readonly expiresIn: number
  readonly #jwt: JwtSignerVerifier

  constructor (jwt: JwtSignerVerifier, expiresIn: number) {
    this.#jwt = jwt
    this.expiresIn = expiresIn
  }

  issue (account: PasswordAuthAccount): IssuedToken {
    const accessToken = this.#jwt.sign({
      sub: account.id,
      jti: randomBytes(16).toString('base64url'),
      cv: account.credentialVersion
    })
    return { accessToken, tokenType: 'Bearer', expiresIn: this.expiresIn }
  }

  /** The claims of a token whose signature, header and claims check out; throws 401 otherwise. */
  verify (token: string): AccessTokenClaims {
    let decoded: { header: Record<string, unknown>, payload: Record<string, unknown> }
    try {
      decoded = this.#jwt.verify(token)
    } catch {
      throw requestError('FST_PWAUTH_TOKEN_INVALID')
    }
    const { header, payload } = decoded
    for (const name in header) {
      if (!ALLOWED_HEADER.has(name)) throw requestError('FST_PWAUTH_TOKEN_INVALID')
    }
    if (typeof payload.sub !== 'string' || payload.sub === '' || typeof payload.jti !== 'string' ||
        payload.jti === '' || !Number.isSafeInteger(payload.cv)) {
      throw requestError('FST_PWAUTH_TOKEN_INVALID')
    }
    return payload as unknown as AccessTokenClaims
  }
}
