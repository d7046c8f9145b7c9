import { createHash, createPrivateKey, createPublicKey, hkdfSync, KeyObject } from 'node:crypto'
import { invalidOption } from '../common/errors.js'
import { assert } from '../common/option-rules.js'

export type JwtAlgorithm = 'HS256' | 'EdDSA' | 'ES256'

/**
 * A public key as a JWK. Our own type: `JsonWebKey` is exported by node:crypto in @types/node 20 but not in
 * newer ones, and the public declarations must compile on both.
 */
export interface PublicJwk {
  kty?: string
  crv?: string
  x?: string
  y?: string
  [member: string]: unknown
}

type KeyMaterial = string | Buffer | KeyObject

/** One signing key: an HS256 secret, or an EdDSA / ES256 key pair (PEM text, DER buffer or KeyObject). */
export interface JwtKey {
  /** Names the key in the `kid` header of its tokens. Default: derived from the key, so instances configured alike agree. */
  kid?: string
  /** Default HS256 with `secret`; EdDSA and ES256 take `privateKey` and `publicKey`. */
  algorithm?: JwtAlgorithm
  /** HS256: at least 32 bytes. */
  secret?: string | Buffer
  /** Needed by the key that signs (the first); optional for keys that only verify. */
  privateKey?: KeyMaterial
  publicKey?: KeyMaterial
}

/** A configured key, ready for fast-jwt. */
export interface ResolvedKey {
  kid: string
  algorithm: JwtAlgorithm
  /** What signs: the secret or the private key (PEM); undefined for a key that only verifies. */
  signingKey: string | Buffer | undefined
  /** What verifies: the secret or the public key (PEM). */
  verifyingKey: string | Buffer
  /** The public key as a JWK, for a JWKS document; undefined for HS256. */
  publicJwk: PublicJwk | undefined
  /**
   * The root of every key the plugin derives from this one (tokens/key-ring.ts), itself derived from the
   * secret or private key (HKDF): worthless without it, so a database dump cannot mint tokens. Undefined
   * for a key that only verifies (a public key alone).
   */
  rootKey: Buffer | undefined
}

const MIN_SECRET_BYTES = 32
const KID_PATTERN = /^[\w.-]{1,64}$/
const KEY_FIELDS = new Set(['kid', 'algorithm', 'secret', 'privateKey', 'publicKey'])

function isMaterial (value: unknown): value is KeyMaterial {
  return typeof value === 'string' || Buffer.isBuffer(value) || value instanceof KeyObject
}

/** A KeyObject from PEM text, a PEM or DER Buffer (PKCS#8 / SPKI), or a KeyObject. */
function readKey (material: KeyMaterial, kind: 'private' | 'public'): KeyObject {
  if (material instanceof KeyObject) {
    if (material.type === kind) return material
    // A private KeyObject given as the public key: only its public half may ever be published.
    if (kind === 'public' && material.type === 'private') return createPublicKey(material)
    throw new TypeError(`a ${material.type} key where the ${kind} key belongs`)
  }
  if (Buffer.isBuffer(material) && !material.subarray(0, 11).toString('latin1').startsWith('-----BEGIN')) {
    return kind === 'private'
      ? createPrivateKey({ key: material, format: 'der', type: 'pkcs8' })
      : createPublicKey({ key: material, format: 'der', type: 'spki' })
  }
  return kind === 'private' ? createPrivateKey(material) : createPublicKey(material)
}

/**
 * The root key of a key's secret material. Its label names refresh tokens, its first use: refresh tokens
 * are still authenticated with the root itself (see 'refresh-token' in key-ring.ts), and another label
 * would change every derived key, ending every session and forgetting every device.
 */
function rootKeyFrom (material: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), 'fastify-password-auth refresh-token v1', 32))
}

/** RFC 7638 thumbprint: the same public key gets the same kid everywhere. */
function thumbprint (jwk: PublicJwk): string {
  const members = jwk.kty === 'OKP' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url')
}

/** The kid an HS256 secret gets by default: derived from the secret, so instances configured alike agree. */
export function secretKeyId (secret: string | Buffer): string {
  return 'hs-' + createHash('sha256').update('fastify-password-auth kid\0').update(Buffer.from(secret)).digest('base64url').slice(0, 22)
}

function resolveSecretKey (key: JwtKey, where: string): ResolvedKey {
  const { secret } = key
  assert(typeof secret === 'string' || Buffer.isBuffer(secret), `${where}.secret is required for HS256 (at least ${MIN_SECRET_BYTES} random bytes)`)
  assert(Buffer.byteLength(secret) >= MIN_SECRET_BYTES, `${where}.secret must be at least ${MIN_SECRET_BYTES} bytes long`)
  assert(key.privateKey === undefined && key.publicKey === undefined, `${where}: HS256 takes a secret, not privateKey/publicKey`)
  const bytes = Buffer.from(secret)
  return {
    kid: key.kid ?? secretKeyId(bytes),
    algorithm: 'HS256',
    signingKey: secret,
    verifyingKey: secret,
    publicJwk: undefined,
    rootKey: rootKeyFrom(bytes)
  }
}

function resolveKeyPair (key: JwtKey, algorithm: 'EdDSA' | 'ES256', where: string): ResolvedKey {
  assert(key.secret === undefined, `${where}.secret is for HS256; ${algorithm} takes privateKey and publicKey`)
  assert(key.privateKey !== undefined || key.publicKey !== undefined, `${where}: ${algorithm} needs privateKey and/or publicKey`)
  assert(key.privateKey === undefined || isMaterial(key.privateKey), `${where}.privateKey must be PEM text, a DER Buffer or a KeyObject`)
  assert(key.publicKey === undefined || isMaterial(key.publicKey), `${where}.publicKey must be PEM text, a DER Buffer or a KeyObject`)
  let privateKey: KeyObject | undefined
  let publicKey: KeyObject
  try {
    privateKey = key.privateKey === undefined ? undefined : readKey(key.privateKey, 'private')
    publicKey = key.publicKey === undefined ? createPublicKey(privateKey!) : readKey(key.publicKey, 'public')
  } catch (err) {
    throw invalidOption(`${where}: the ${algorithm} keys cannot be read (${(err as Error).message})`)
  }
  const expected = algorithm === 'EdDSA' ? { type: 'ed25519', name: 'an Ed25519' } : { type: 'ec', name: 'a P-256' }
  const jwk = publicKey.export({ format: 'jwk' })
  assert(publicKey.asymmetricKeyType === expected.type && (algorithm === 'EdDSA' || jwk.crv === 'P-256'),
    `${where}: ${algorithm} needs ${expected.name} key pair`)
  if (privateKey !== undefined) {
    const derived = createPublicKey(privateKey).export({ format: 'der', type: 'spki' })
    assert(derived.equals(publicKey.export({ format: 'der', type: 'spki' })), `${where}: privateKey and publicKey are not one pair`)
  }
  const kid = key.kid ?? thumbprint(jwk)
  return {
    kid,
    algorithm,
    signingKey: privateKey?.export({ format: 'pem', type: 'pkcs8' }),
    verifyingKey: publicKey.export({ format: 'pem', type: 'spki' }),
    publicJwk: { ...jwk, kid, alg: algorithm, use: 'sig' },
    rootKey: privateKey === undefined ? undefined : rootKeyFrom(privateKey.export({ format: 'der', type: 'pkcs8' }))
  }
}

function resolveKey (key: unknown, where: string): ResolvedKey {
  assert(typeof key === 'object' && key !== null, `${where} must be an object`)
  for (const name of Object.keys(key)) assert(KEY_FIELDS.has(name), `${where} has an unknown field "${name}"`)
  const { algorithm = 'HS256', kid } = key as JwtKey
  assert(kid === undefined || (typeof kid === 'string' && KID_PATTERN.test(kid)), `${where}.kid must be 1 to 64 letters, digits, ".", "_" or "-"`)
  assert(['HS256', 'EdDSA', 'ES256'].includes(algorithm), `${where}.algorithm must be one of HS256, EdDSA, ES256`)
  return algorithm === 'HS256' ? resolveSecretKey(key as JwtKey, where) : resolveKeyPair(key as JwtKey, algorithm, where)
}

/**
 * The configured keys, the signing one first. Every key verifies the tokens naming it; only the first
 * signs. `where` names each key in error messages.
 */
export function resolveKeys (keys: ReadonlyArray<{ key: unknown, where: string }>): ResolvedKey[] {
  assert(keys.length > 0, 'jwt needs a key: jwt.secret, or jwt.keys')
  const resolved = keys.map(({ key, where }) => resolveKey(key, where))
  assert(resolved[0]!.signingKey !== undefined, `${keys[0]!.where} signs tokens, so it needs its privateKey`)
  const kids = new Set<string>()
  for (const [index, { kid }] of resolved.entries()) {
    assert(!kids.has(kid), `${keys[index]!.where}: kid "${kid}" names two keys`)
    kids.add(kid)
  }
  return resolved
}
