import { scryptSync, timingSafeEqual } from 'node:crypto'
import { decodeBase64 } from './base64.js'
import type { VerifyBuiltIn } from './types.js'

export interface ScryptHash {
  /** N, the CPU/memory cost. */
  cost: number
  blockSize: number
  parallelization: number
  salt: Buffer
  hash: Buffer
}

/** Bytes of scrypt's V array (128·N·r): enough for Firebase (N=2^14, r=8), Better Auth (2^14, 16) and passlib (2^16, 8). */
export const SCRYPT_MAX_MEMORY = 64 * 1024 * 1024
/** N·r·p, the number of block mixes: 2^21 takes about 0.6 s on a 2 vCPU VM. */
export const SCRYPT_MAX_WORK = 2 ** 21

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/

/**
 * Reads `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>` (PHC, base64 with or without padding). Null for a
 * malformed string or one whose parameters exceed the bounds, so a damaged stored hash can neither
 * allocate more than 64 MiB nor run for long.
 */
export function parseScryptHash (text: string): ScryptHash | null {
  const match = PHC.exec(text)
  if (match === null) return null
  const [, ln, r, p, salt, hash] = match
  const parsed = { cost: 2 ** Number(ln), blockSize: Number(r), parallelization: Number(p), salt: decodeBase64(salt!), hash: decodeBase64(hash!) }
  if (parsed.salt === null || parsed.hash === null) return null
  const { cost, blockSize, parallelization } = parsed
  const bounded = Number(ln) >= 1 && blockSize >= 1 && parallelization >= 1 &&
    parsed.hash.length >= 16 && parsed.hash.length <= 128 && parsed.salt.length <= 256 &&
    128 * cost * blockSize <= SCRYPT_MAX_MEMORY && cost * blockSize * parallelization <= SCRYPT_MAX_WORK
  return bounded ? parsed as ScryptHash : null
}

function deriveScrypt (password: string, { cost, blockSize, parallelization, salt, hash }: ScryptHash): Buffer {
  return scryptSync(password, salt, hash.length, {
    // Node refuses more than 32 MiB unless told; the V array is 128·N·r bytes, the rest is small.
    N: cost, r: blockSize, p: parallelization, maxmem: 128 * cost * blockSize + 128 * blockSize * parallelization + 1024 * 1024
  })
}

export const verifyScrypt: VerifyBuiltIn = (hash, password) => {
  const parsed = parseScryptHash(hash)
  if (parsed === null) return false
  return timingSafeEqual(deriveScrypt(password, parsed), parsed.hash)
}
