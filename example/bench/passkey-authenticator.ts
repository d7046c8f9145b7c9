/**
 * The bench's passkeys: a device-bound ES256 authenticator in software (node:crypto keys, `none`
 * attestation), enough CBOR for an attestation object and a COSE key, and nothing a test would get wrong
 * on purpose (test/helpers/soft-authenticator.ts is that one). The bench signs its assertions outside the
 * timed windows, so what a run measures is the server's verification, not the client's signature.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'

/** The relying party the bench server is configured with. */
export const BENCH_PASSKEYS = Object.freeze({ rpId: 'localhost', rpName: 'Bench', origins: ['http://localhost'] })
const ORIGIN = BENCH_PASSKEYS.origins[0]!

type Cbor = number | string | Uint8Array | Map<number | string, Cbor>

function head (major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value])
  if (value < 0x100) return Buffer.from([(major << 5) | 24, value])
  return Buffer.from([(major << 5) | 25, value >> 8, value & 0xff])
}

function cbor (value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value)
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)])
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value])
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])])
}

const b64 = (bytes: Uint8Array | string): string => Buffer.from(bytes).toString('base64url')
const sha256 = (data: string | Uint8Array): Buffer => createHash('sha256').update(data).digest()
const counterBytes = (counter: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32BE(counter); return b }
/** User present, user verified (a passkey is then a second factor by itself); with AT, attested credential data follows. */
const UP_UV = 0x01 | 0x04
const AT = 0x40

export class BenchPasskey {
  readonly id: string
  #counter = 0
  readonly #privateKey: KeyObject
  readonly #publicKey: KeyObject
  #userHandle = ''

  constructor () {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    this.#privateKey = privateKey
    this.#publicKey = publicKey
    this.id = b64(randomBytes(16))
  }

  #clientData (type: string, challenge: string): string {
    return b64(JSON.stringify({ type, challenge, origin: ORIGIN, crossOrigin: false }))
  }

  /** The public key as a COSE key, as the plugin stores it (base64url). */
  get publicKey (): string {
    const jwk = this.#publicKey.export({ format: 'jwk' })
    return b64(cbor(new Map<number, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]])))
  }

  /** navigator.credentials.create() for RegisterOptions' answer: the body of POST /Auth/Passkeys. */
  create (options: { challenge: string, user: { id: string } }): Record<string, unknown> {
    this.#userHandle = options.user.id
    const cose = Buffer.from(this.publicKey, 'base64url')
    const rawId = Buffer.from(this.id, 'base64url')
    const length = Buffer.alloc(2)
    length.writeUInt16BE(rawId.length)
    const authData = Buffer.concat([sha256(BENCH_PASSKEYS.rpId), Buffer.from([UP_UV | AT]), counterBytes(0), Buffer.alloc(16), length, rawId, cose])
    return {
      response: {
        id: this.id,
        rawId: this.id,
        type: 'public-key',
        response: {
          clientDataJSON: this.#clientData('webauthn.create', options.challenge),
          attestationObject: b64(cbor(new Map<string, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]))),
          transports: ['internal']
        },
        clientExtensionResults: {}
      },
      name: 'Bench'
    }
  }

  /** navigator.credentials.get() for a challenge: the body of POST /Auth/LoginPasskey, its counter one more than the last. */
  get (challenge: string): Record<string, unknown> {
    const authData = Buffer.concat([sha256(BENCH_PASSKEYS.rpId), Buffer.from([UP_UV]), counterBytes(++this.#counter)])
    const clientDataJSON = this.#clientData('webauthn.get', challenge)
    const signature = sign('sha256', Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, 'base64url'))]), this.#privateKey)
    return {
      response: {
        id: this.id,
        rawId: this.id,
        type: 'public-key',
        response: { clientDataJSON, authenticatorData: b64(authData), signature: b64(signature), userHandle: this.#userHandle },
        clientExtensionResults: {}
      }
    }
  }
}
