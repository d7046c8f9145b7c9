import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import { createSqliteSchema } from '../../lib/stores/sqlite/index.js'
import type { Teardown } from './teardown.js'

const require = createRequire(import.meta.url)

/**
 * better-sqlite3 is a native module built for one Node ABI (`npm rebuild better-sqlite3`, .ci/run does it). In CI a
 * module that does not load is an error; elsewhere (another Node, a skipped build) the tests skip with this reason.
 */
function load (): { Database: typeof BetterSqlite3 | undefined, reason: string | false } {
  try {
    const Database = require('better-sqlite3') as typeof BetterSqlite3
    new Database(':memory:').close()
    return { Database, reason: false }
  } catch (err) {
    const reason = `better-sqlite3 does not load on Node ${process.version} (${(err as Error).message.split('\n')[0]}); run npm rebuild better-sqlite3`
    if (process.env.CI !== undefined) throw new Error(`CI: ${reason}`)
    return { Database: undefined, reason }
  }
}

const loaded = load()
export const sqliteUnavailable = loaded.reason

/** A fresh database file in a temporary folder (removed in teardown). */
export function sqliteFile (t: Teardown): string {
  const dir = mkdtempSync(join(tmpdir(), 'fpa-sqlite-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return join(dir, 'auth.db')
}

/** A connection to `file` (closed in teardown), with the schema created on it (WAL, busy timeout, tables). */
export function sqliteDatabase (t: Teardown, file: string, tables: Parameters<typeof createSqliteSchema>[1] = {}): BetterSqlite3.Database {
  const database = new loaded.Database!(file)
  t.teardown(() => { database.close() })
  createSqliteSchema(database, tables)
  return database
}
