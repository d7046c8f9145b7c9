import { assert, checkKnownKeys, checkPath, isInteger, isObject, PLUGIN_NAME } from '../common/option-rules.js'
import type { AccessTokenConfig } from './access-tokens.js'
import { resolveKeys, type JwtKey, type ResolvedKey } from './keys.js'

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

const JWT_OPTION_KEYS = ['secret', 'algorithm', 'privateKey', 'publicKey', 'kid', 'keys', 'issuer', 'audience', 'expiresIn', 'jwksPath']

export function resolveJwt (jwt: JwtOptions | undefined): { keys: ResolvedKey[], accessToken: AccessTokenConfig, jwksPath: string | undefined } {
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
