import type { FastifyInstance } from 'fastify'
import { invalidOption } from '../common/errors.js'
import { assert, checkKnownKeys, checkPath, isInteger, isObject, PLUGIN_NAME } from '../common/option-rules.js'
import { checkStore } from '../stores/check-store.js'
import { MemoryOneTimeTokenStore } from '../stores/memory/one-time-tokens.js'
import type { StoreCall } from '../stores/store-call.js'
import type { OneTimeTokenStore } from '../stores/types.js'
import { AccessTokens, engineChecks, type AccessTokenConfig } from './access-tokens.js'
import { registerJwtEngine } from './jwt-engine.js'
import { KeyRing } from './key-ring.js'
import { resolveKeys, type JwtKey, type ResolvedKey } from './keys.js'
import { OneTimeTokens } from './one-time-tokens.js'

/** The plugin options tokens/ reads. */
export interface TokensPluginOptions {
  jwt: JwtOptions
  /** One-time tokens (reset links, pending registrations); default in memory (share one store between instances). */
  oneTimeTokens?: OneTimeTokenStore
}

export interface JwtOptions extends JwtKey {
  /**
   * Several keys, for rotation: the first signs, every one verifies the tokens whose `kid` names it.
   * Instead of `secret` / `algorithm` / `privateKey` / `publicKey` / `kid` (one key).
   */
  keys?: JwtKey[]
  /** `iss` claim, default 'fastify-password-auth'. */
  issuer?: string
  /** `aud` claim, default 'fastify-password-auth'. */
  audience?: string
  /** Access-token lifetime in seconds, default 900. */
  expiresIn?: number
  /**
   * Publishes the public keys of EdDSA / ES256 keys as a JWKS document at this path (e.g.
   * '/.well-known/jwks.json'), for services that verify tokens themselves. Default: not published.
   */
  jwksPath?: string
}

export const JWT_OPTION_KEYS = ['secret', 'algorithm', 'privateKey', 'publicKey', 'kid', 'keys', 'issuer', 'audience', 'expiresIn', 'jwksPath']

export interface ResolvedTokens {
  keys: ResolvedKey[]
  accessToken: AccessTokenConfig
  /** Where the JWKS document is published, if it is. */
  jwksPath: string | undefined
  oneTimeTokenStore: OneTimeTokenStore
}

export function resolveTokens ({ jwt, oneTimeTokens }: TokensPluginOptions): ResolvedTokens {
  if (oneTimeTokens !== undefined) checkStore('oneTimeTokens', oneTimeTokens)
  return { ...resolveJwt(jwt), oneTimeTokenStore: oneTimeTokens ?? new MemoryOneTimeTokenStore() }
}

function resolveJwt (jwt: JwtOptions | undefined): Omit<ResolvedTokens, 'oneTimeTokenStore'> {
  assert(isObject(jwt), 'the "jwt" option is required, e.g. { secret: <at least 32 random bytes> }')
  checkKnownKeys(jwt, JWT_OPTION_KEYS, 'jwt')
  const { keys, issuer = PLUGIN_NAME, audience = PLUGIN_NAME, expiresIn = 900, jwksPath, ...single } = jwt
  let resolved: ResolvedKey[]
  if (keys === undefined) {
    resolved = resolveKeys([{ key: single, where: 'jwt' }])
  } else {
    assert(Object.keys(single).length === 0, 'jwt.keys replaces jwt.secret, algorithm, privateKey, publicKey and kid: give one or the other')
    assert(Array.isArray(keys) && keys.length > 0, 'jwt.keys must be a non-empty array')
    resolved = resolveKeys(keys.map((key, index) => ({ key, where: `jwt.keys[${index}]` })))
  }
  assert(typeof issuer === 'string' && issuer !== '', 'jwt.issuer must be a non-empty string')
  assert(typeof audience === 'string' && audience !== '', 'jwt.audience must be a non-empty string')
  assert(isInteger(expiresIn, 1, 86_400), 'jwt.expiresIn must be a whole number of seconds from 1 to 86400')
  if (jwksPath !== undefined) {
    checkPath(jwksPath, 'jwt.jwksPath', false)
    assert(resolved.some((key) => key.publicJwk !== undefined), 'jwt.jwksPath publishes public keys, and HS256 secrets have none: use EdDSA or ES256 keys')
  }
  return { keys: resolved, accessToken: { issuer, audience, expiresIn }, jwksPath }
}

/**
 * The key ring, the access tokens (their @fastify/jwt registered in a context of their own, then signing and
 * verifying a probe, so keys that cannot work together fail here) and the one-time tokens.
 */
export async function createTokens (fastify: FastifyInstance, { keys, accessToken, oneTimeTokenStore }: ResolvedTokens, storeCall: StoreCall) {
  let accessTokens: AccessTokens
  try {
    const engines = await registerJwtEngine(fastify, keys, engineChecks(accessToken))
    accessTokens = new AccessTokens(keys, engines, accessToken)
    // The probe lives a minute: with expiresIn 1, a token signed late in a second has expired early in the next.
    const probe = new AccessTokens(keys, engines, { ...accessToken, expiresIn: 60 })
    probe.verify(probe.issue({ accountId: 'probe', sessionId: 'probe', credentialVersion: 0 }).accessToken)
  } catch (err) {
    throw invalidOption(`the jwt keys cannot sign and verify tokens (${(err as Error).message})`)
  }
  const keyRing = new KeyRing(keys)
  return { keyRing, accessTokens, oneTimeTokens: new OneTimeTokens(oneTimeTokenStore, keyRing, storeCall) }
}
