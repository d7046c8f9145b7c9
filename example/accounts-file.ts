import { createHmac } from 'node:crypto'
import { readFile } from 'node:fs/promises'

/**
 * An entry of AUTH_ACCOUNTS_FILE: a password to hash at start, or a ready hash in any format the plugin
 * verifies (argon2, bcrypt, scrypt, Django PBKDF2), replaced by argon2id at the account's first login.
 */
export interface AccountSeed {
  email: string
  password?: string
  passwordHash?: string
  active?: boolean
  id?: string
}

function checkSeed (entry: unknown, index: number): AccountSeed {
  const where = `AUTH_ACCOUNTS_FILE entry ${index}`
  if (typeof entry !== 'object' || entry === null) throw new Error(`${where} is not an object`)
  const seed = entry as Record<string, unknown>
  if (typeof seed.email !== 'string') throw new Error(`${where}: "email" must be a string`)
  if ((typeof seed.password === 'string') === (typeof seed.passwordHash === 'string')) {
    throw new Error(`${where}: give exactly one of "password" and "passwordHash"`)
  }
  if (seed.active !== undefined && typeof seed.active !== 'boolean') throw new Error(`${where}: "active" must be true or false`)
  if (seed.id !== undefined && typeof seed.id !== 'string') throw new Error(`${where}: "id" must be a string`)
  return seed as unknown as AccountSeed
}

export async function readAccountsFile (path: string): Promise<AccountSeed[]> {
  let entries: unknown
  try {
    entries = JSON.parse(await readFile(path, 'utf8'))
  } catch (err) {
    throw new Error(`AUTH_ACCOUNTS_FILE: cannot read ${path} as JSON (${(err as Error).message})`)
  }
  if (!Array.isArray(entries)) throw new Error('AUTH_ACCOUNTS_FILE must hold a JSON array of accounts')
  return entries.map(checkSeed)
}

/**
 * The demo account. Its password is derived from the JWT secret, so instances that share a database (and
 * must share the secret anyway) print the same one; with a generated secret it is new at each start.
 */
export function demoAccount (jwtSecret: string): AccountSeed & { password: string } {
  const derived = createHmac('sha256', jwtSecret).update('fastify-password-auth demo password').digest('base64url').slice(0, 16)
  return { email: 'demo@example.com', password: `demo-${derived}` }
}
