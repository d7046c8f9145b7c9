// Every store in one SQLite file (DATABASE_URL=sqlite:<file>), for ONE server process: accounts, sessions, attempt
// counters, one-time tokens, second factors, passkeys, trusted devices and activity survive a restart. The tables
// are created at start if missing (createSqliteSchema: WAL, a busy timeout, then sqliteSchemaSql()).
import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import {
  createSqliteSchema, SqliteAccountStore, SqliteActivityStore, SqliteAttemptStore, SqliteMfaStore, SqliteOneTimeTokenStore, SqlitePasskeyStore, SqliteSessionStore,
  SqliteTrustedDeviceStore
} from '../../lib/stores/sqlite/index.js'
import { sqliteFile } from '../config.js'
import type { ServerStores } from './types.js'

/** better-sqlite3 is an optional peer (a native module): loaded only for sqlite:, with the fix said when it does not load. */
function openDatabase (file: string): BetterSqlite3.Database {
  let Database: typeof BetterSqlite3
  try {
    Database = createRequire(import.meta.url)('better-sqlite3')
  } catch (err) {
    throw new Error(`DATABASE_URL=sqlite:… needs better-sqlite3 built for Node ${process.version}: npm install better-sqlite3 ` +
      `(or npm rebuild better-sqlite3) (${(err as Error).message.split('\n')[0]})`)
  }
  mkdirSync(dirname(file), { recursive: true })
  return new Database(file)
}

export async function sqliteStores (databaseUrl: string): Promise<ServerStores> {
  const file = sqliteFile(databaseUrl)
  const database = openDatabase(file)
  try {
    createSqliteSchema(database)
  } catch (err) {
    database.close()
    throw new Error(`DATABASE_URL: cannot set up the tables in SQLite file ${file} (${(err as Error).message})`)
  }
  const accounts = new SqliteAccountStore({ database })
  return {
    accounts,
    sessions: new SqliteSessionStore({ database }),
    attempts: new SqliteAttemptStore({ database }),
    oneTimeTokens: new SqliteOneTimeTokenStore({ database }),
    mfa: new SqliteMfaStore({ database }),
    passkeys: new SqlitePasskeyStore({ database }),
    activity: new SqliteActivityStore({ database }),
    trustedDevices: new SqliteTrustedDeviceStore({ database }),
    seed: async (seeds) => { for (const seed of seeds) await accounts.add(seed, { ifAbsent: true }) },
    healthCheck: async () => { database.prepare('SELECT 1').get() },
    close: async () => { database.close() }
  }
}
