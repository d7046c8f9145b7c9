/**
 * Access tokens for the logout run, made the way the plugin makes them (HS256, `typ: at+jwt`, the kid it
 * derives from the secret, its default issuer and audience, `sub`, `sid`, `jti`, `cv`, `iat`, `exp`) with
 * the bench secret, for sessions the bench server created (POST /bench/sessions). Each logout uses a
 * session up, and Login only makes as many as argon2 allows, so the load generator signs them itself.
 */
import { createHmac, randomBytes } from 'node:crypto'
import { secretKeyId } from '../../lib/tokens/keys.js'
import { BENCH_SECRET } from './settings.js'

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid: secretKeyId(BENCH_SECRET) })).toString('base64url')

export function mintAccessToken (sub: string, sid: string, { credentialVersion = 0, lifetimeSeconds = 900 } = {}): string {
  const iat = Math.floor(Date.now() / 1000)
  const payload = Buffer.from(JSON.stringify({
    sub,
    sid,
    jti: randomBytes(16).toString('base64url'),
    cv: credentialVersion,
    iat,
    exp: iat + lifetimeSeconds,
    iss: 'fastify-password-auth',
    aud: 'fastify-password-auth'
  })).toString('base64url')
  const signature = createHmac('sha256', BENCH_SECRET).update(`${HEADER}.${payload}`).digest('base64url')
  return `${HEADER}.${payload}.${signature}`
}
