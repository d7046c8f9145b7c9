import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'

/**
 * A software WebAuthn authenticator for black-box tests: ES256 keys from node:crypto, `none` attestation,
 * and a tiny CBOR encoder (only what an attestation object and a COSE key need). It builds the JSON a
 * browser hands to @simplewebauthn/browser's callers, and lets a test get each field wrong on purpose.
 */

type Cbor = number | string | Uint8Array | Cbor[] | Map<number | string, Cbor>

function head (major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value])
  if (value < 0x100) return Buffer.from([(major << 5) | 24, value])
  if (value < 0x10000) return Buffer.from([(major << 5) | 25, value >> 8, value & 0xff])
  const b = Buffer.alloc(5)
  b[0] = (major << 5) | 26
  b.writeUInt32BE(value, 1)
  return b
}

export function cbor (value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value)
  if (typeof value === 'string') { const text = Buffer.from(value, 'utf8'); return Buffer.concat([head(3, text.length), text]) }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value])
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)])
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])])
}

const b64 = (bytes: Uint8Array | string): string => Buffer.from(bytes).toString('base64url')
const sha256 = (data: string | Uint8Array): Buffer => createHash('sha256').update(data).digest()

const UP = 0x01
const UV = 0x04
const BE = 0x08
const BS = 0x10
const AT = 0x40

export interface SoftCredential {
  id: string
  privateKey: KeyObject
  userHandle: string
  rpId: string
  counter: number
}

/** What a test may get wrong in one ceremony. */
export interface Ceremony {
  origin?: string
  rpId?: string
  uv?: boolean
  up?: boolean
  type?: string
  challenge?: string
  crossOrigin?: boolean
  /** The signature counter to report (default: the credential's, plus one if it counts). */
  counter?: number
  userHandle?: string | null
}

export interface SoftAuthenticatorOptions {
  origin: string
  /** Synced (backup eligible, counter 0) or device-bound (a counter that grows). */
  synced?: boolean
}

export class SoftAuthenticator {
  readonly origin: string
  readonly synced: boolean
  readonly credentials: SoftCredential[] = []

  constructor ({ origin, synced = false }: SoftAuthenticatorOptions) {
    this.origin = origin
    this.synced = synced
  }

  #clientData (type: string, challenge: string, c: Ceremony): string {
    return b64(JSON.stringify({ type: c.type ?? type, challenge: c.challenge ?? challenge, origin: c.origin ?? this.origin, crossOrigin: c.crossOrigin ?? false }))
  }

  #flags (c: Ceremony, attested: boolean): number {
    let flags = (c.up ?? true) ? UP : 0
    if (c.uv ?? true) flags |= UV
    if (this.synced) flags |= BE | BS
    if (attested) flags |= AT
    return flags
  }

  /** navigator.credentials.create(): a RegistrationResponseJSON for creation options (JSON). */
  create (options: { challenge: string, rp: { id: string }, user: { id: string } }, c: Ceremony = {}): Record<string, unknown> {
    const rpId = c.rpId ?? options.rp.id
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const jwk = publicKey.export({ format: 'jwk' })
    const id = randomBytes(16)
    const cose = cbor(new Map<number, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]))
    const counter = this.synced ? 0 : (c.counter ?? 0)
    const count = Buffer.alloc(4)
    count.writeUInt32BE(counter)
    const length = Buffer.alloc(2)
    length.writeUInt16BE(id.length)
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.#flags(c, true)]), count, Buffer.alloc(16), length, id, cose])
    const credential = { id: b64(id), privateKey, userHandle: options.user.id, rpId, counter }
    this.credentials.push(credential)
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: this.#clientData('webauthn.create', options.challenge, c),
        attestationObject: b64(cbor(new Map<string, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]))),
        transports: ['internal']
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform'
    }
  }

  /** navigator.credentials.get(): an AuthenticationResponseJSON with `credential` (default the last made). */
  get (options: { challenge: string, rpId?: string }, c: Ceremony = {}, credential = this.credentials.at(-1)!): Record<string, unknown> {
    const rpId = c.rpId ?? options.rpId ?? credential.rpId
    const counter = c.counter ?? (this.synced ? 0 : credential.counter + 1)
    if (c.counter === undefined && !this.synced) credential.counter = counter
    const count = Buffer.alloc(4)
    count.writeUInt32BE(counter)
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.#flags(c, false)]), count])
    const clientDataJSON = this.#clientData('webauthn.get', options.challenge, c)
    const signature = sign('sha256', Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, 'base64url'))]), credential.privateKey)
    const userHandle = c.userHandle === undefined ? credential.userHandle : c.userHandle
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: { clientDataJSON, authenticatorData: b64(authData), signature: b64(signature), ...userHandle === null ? {} : { userHandle } },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform'
    }
  }
}
