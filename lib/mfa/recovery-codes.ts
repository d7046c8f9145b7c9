import { createHmac, randomBytes } from 'node:crypto'
import type { KeyRing } from '../tokens/key-ring.js'

export const RECOVERY_CODE_COUNT = 10
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567'

/** A recovery code: 120 random bits as 24 base32 characters, in groups of four (`abcd-efgh-…`). */
function newRecoveryCode (): string {
  const bytes = randomBytes(15)
  let bits = 0
  let value = 0
  let code = ''
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      code += ALPHABET[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  return code.match(/.{4}/g)!.join('-')
}

/** A code as typed: case, spaces and dashes do not matter. Null if it cannot be a recovery code. */
export function normaliseRecoveryCode (code: string): string | null {
  const plain = code.replace(/[\s-]/g, '').toLowerCase()
  return /^[a-z2-7]{24}$/.test(plain) ? plain : null
}

/**
 * Recovery codes are stored as HMACs (the codes carry 120 bits, so no slow hash is needed) with a key derived
 * from a signing key and named by its kid, bound to the account: the store holds nothing that works as a code,
 * even with the keys. Every configured key can check a code, so rotating the signing key keeps them working.
 */
export class RecoveryCodes {
  readonly #keys: ReadonlyArray<{ kid: string, key: Buffer }>

  constructor (keyRing: KeyRing) {
    this.#keys = keyRing.derive('recovery-code').all
  }

  /** Ten new codes, to show once, and what the store keeps of them. */
  generate (accountId: string): { codes: string[], hashes: string[] } {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
    const { kid, key } = this.#keys[0]!
    return { codes, hashes: codes.map((code) => hash(kid, key, accountId, normaliseRecoveryCode(code)!)) }
  }

  /** What the store may hold for this code, one hash per configured key; none if it is not a recovery code. */
  candidates (accountId: string, code: string): string[] {
    const plain = normaliseRecoveryCode(code)
    return plain === null ? [] : this.#keys.map(({ kid, key }) => hash(kid, key, accountId, plain))
  }
}

function hash (kid: string, key: Buffer, accountId: string, plain: string): string {
  return `${kid}.${createHmac('sha256', key).update(`${accountId}\0${plain}`).digest('base64url')}`
}
