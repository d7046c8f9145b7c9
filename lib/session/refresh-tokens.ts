import { createHmac, timingSafeEqual } from 'node:crypto'
import type { KeyRing } from '../tokens/key-ring.js'

/** What a refresh token says: its session, its generation and the session's start. */
export interface RefreshTokenFields {
  sessionId: string
  generation: number
  /** Epoch milliseconds, rounded down to the second. */
  createdAt: number
}

// <session id: 128 bits>.<generation>.<session start, epoch seconds>.<HMAC-SHA256>, numbers in base 36.
const FORMAT = /^([\w-]{22})\.([0-9a-z]{1,8})\.([0-9a-z]{1,9})\.([\w-]{43})$/
const MAC_LABEL = 'fastify-password-auth refresh-token v1\0'

/**
 * Refresh tokens are computed, not stored: an HMAC over the session id, the generation and the start
 * time, with the 'refresh-token' key of each JWT key (tokens/key-ring.ts). Stores keep only the generation counter, so a database
 * dump cannot refresh a session, and the grace answer can hand out the very token the first refresh did.
 */
export class RefreshTokens {
  /** The key new tokens are authenticated with. */
  readonly currentKeyId: string
  readonly #keys: ReadonlyArray<{ kid: string, key: Buffer }>

  constructor (keyRing: KeyRing) {
    const { current, all } = keyRing.derive('refresh-token')
    this.#keys = all
    this.currentKeyId = current.kid
  }

  /** The token of a generation; `keyId` names the key it was first made with (the current key if that one is gone). */
  mint ({ sessionId, generation, createdAt }: RefreshTokenFields, keyId: string): string {
    const { key } = this.#keys.find((candidate) => candidate.kid === keyId) ?? this.#keys[0]!
    const body = `${sessionId}.${generation.toString(36)}.${Math.floor(createdAt / 1000).toString(36)}`
    return `${body}.${mac(key, body).toString('base64url')}`
  }

  /** The fields of a well-formed token that one of the configured keys authenticated; otherwise null. */
  read (token: string): RefreshTokenFields | null {
    const match = FORMAT.exec(token)
    if (match === null) return null
    const [, sessionId, generation, created, signature] = match
    const body = `${sessionId}.${generation}.${created}`
    // Compared as text: a base64url string that differs only in unused bits decodes to the same bytes,
    // and a refresh token has one spelling.
    const presented = Buffer.from(signature!)
    if (!this.#keys.some(({ key }) => timingSafeEqual(Buffer.from(mac(key, body).toString('base64url')), presented))) return null
    return { sessionId: sessionId!, generation: parseInt(generation!, 36), createdAt: parseInt(created!, 36) * 1000 }
  }
}

function mac (key: Buffer, body: string): Buffer {
  return createHmac('sha256', key).update(MAC_LABEL).update(body).digest()
}
