import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { KeyRing } from '../tokens/key-ring.js'

// v1.<kid>.<96-bit IV>.<ciphertext and 128-bit tag>, base64url; the kid names the key it was sealed with.
const FORMAT = /^v1\.([^.]{1,200})\.([\w-]{16})\.([\w-]{22,})$/

/**
 * TOTP secrets at rest: AES-256-GCM with a key derived from each configured signing key, so a copy of the
 * database yields no code. The account id is authenticated data: a sealed secret moved to another account
 * does not open. New secrets are sealed with the first key; any configured key opens what it sealed.
 */
export class SecretBox {
  readonly #keys: ReadonlyArray<{ kid: string, key: Buffer }>

  constructor (keyRing: KeyRing) {
    this.#keys = keyRing.derive('mfa-secret').all
  }

  seal (accountId: string, secret: string): string {
    const { kid, key } = this.#keys[0]!
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(accountId))
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return `v1.${kid}.${iv.toString('base64url')}.${sealed.toString('base64url')}`
  }

  /** Whether `sealed` names the first key (what seal() uses): anything else is re-sealed at its next use (contract §5). */
  isCurrent (sealed: string): boolean {
    return FORMAT.exec(sealed)?.[1] === this.#keys[0]!.kid
  }

  /** The secret, or null if no configured key sealed it for this account. */
  open (accountId: string, sealed: string): string | null {
    const match = FORMAT.exec(sealed)
    const entry = match === null ? undefined : this.#keys.find(({ kid }) => kid === match[1])
    if (match === null || entry === undefined) return null
    const bytes = Buffer.from(match[3]!, 'base64url')
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.key, Buffer.from(match[2]!, 'base64url')).setAAD(Buffer.from(accountId))
      decipher.setAuthTag(bytes.subarray(bytes.length - 16))
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8')
    } catch {
      return null
    }
  }
}
