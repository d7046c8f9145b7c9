import type { AccountStore, PasswordAuthAccount, PasswordHashUpdate, StoredAccount } from '../lib/index.js'
import type { Queryable } from '../lib/stores/postgres/index.js'

/**
 * Accounts in Better Auth's tables: "user", with a credential_version column added, and "account",
 * whose 'credential' row holds the password. A banned user (the admin plugin's column) is inactive.
 */
export class BetterAuthAccountStore implements AccountStore {
  readonly #pool: Queryable

  constructor (pool: Queryable) {
    this.#pool = pool
  }

  async findByEmail (email: string): Promise<StoredAccount | null> {
    const { rows } = await this.#pool.query({
      name: 'better_auth_find_by_email',
      text: `SELECT u.id, u.email, u.banned IS NOT TRUE AS active, u.credential_version AS "credentialVersion", a.password AS "passwordHash"
        FROM "user" u JOIN "account" a ON a."userId" = u.id AND a."providerId" = 'credential'
        WHERE lower(u.email) = $1`,
      values: [email]
    })
    return rows[0] ?? null
  }

  async findById (id: string): Promise<PasswordAuthAccount | null> {
    const { rows } = await this.#pool.query({
      name: 'better_auth_find_by_id',
      text: 'SELECT id, email, banned IS NOT TRUE AS active, credential_version AS "credentialVersion" FROM "user" WHERE id = $1',
      values: [id]
    })
    return rows[0] ?? null
  }

  async updatePasswordHash ({ id, expectedHash, newHash, advanceCredentialVersion }: PasswordHashUpdate): Promise<boolean> {
    const { rowCount } = await this.#pool.query({
      name: 'better_auth_update_password',
      text: `WITH changed AS (
          UPDATE "account" SET password = $3, "updatedAt" = now()
          WHERE "userId" = $1 AND "providerId" = 'credential' AND password = $2 RETURNING "userId")
        UPDATE "user" u SET credential_version = credential_version + $4 FROM changed WHERE u.id = changed."userId"`,
      values: [id, expectedHash, newHash, advanceCredentialVersion ? 1 : 0]
    })
    return rowCount === 1
  }
}
