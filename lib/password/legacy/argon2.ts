export interface Argon2Hash {
  algorithm: 'argon2id' | 'argon2i' | 'argon2d'
  version: number
  memoryCost: number
  timeCost: number
  parallelism: number
}

const PHC = /^\$(argon2(?:id|i|d))\$(?:v=(16|19)\$)?m=(\d{1,7}),t=(\d{1,3}),p=(\d{1,3})\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/

/**
 * Reads an argon2 PHC string (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`). Parameters beyond what the
 * `argon2` option accepts (4 GiB, 100 passes, 255 lanes) are refused: anything the plugin can be configured
 * to make verifies, and a damaged string cannot ask for more. A missing version means 16, as in libargon2.
 */
export function parseArgon2Hash (hash: string): Argon2Hash | null {
  const match = PHC.exec(hash)
  if (match === null) return null
  const [, algorithm, version = '16', m, t, p] = match
  const parsed = { algorithm: algorithm as Argon2Hash['algorithm'], version: Number(version), memoryCost: Number(m), timeCost: Number(t), parallelism: Number(p) }
  const valid = parsed.parallelism >= 1 && parsed.parallelism <= 255 && parsed.timeCost >= 1 && parsed.timeCost <= 100 &&
    parsed.memoryCost >= 8 * parsed.parallelism && parsed.memoryCost <= 4_194_304
  return valid ? parsed : null
}
