// The command behind `npx fastify-password-auth schema <postgres|mysql|sqlite> [--accounts-table <name>]…` (cli.ts).
import { SQL_DIALECTS, schemaSql, type SchemaTables, type SqlDialect } from './index.js'

const USAGE = `Usage: fastify-password-auth schema <${SQL_DIALECTS.join('|')}> [--<store>-table <name>]…
Prints the DDL of every store (tables, indexes, triggers) for your own migrations.
Stores: ${['accounts', 'sessions', 'attempts', 'one-time-tokens', 'mfa', 'activity', 'passkeys', 'trusted-devices'].join(', ')}
  (each table defaults to auth_<store>, e.g. --accounts-table users --sessions-table app.sessions)`

/** `--one-time-tokens-table` → `oneTimeTokensTable`. */
const optionName = (flag: string): string => flag.slice(2).replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase())
const TABLE_OPTIONS = new Set(['accountsTable', 'sessionsTable', 'attemptsTable', 'oneTimeTokensTable', 'mfaTable', 'activityTable', 'passkeysTable', 'trustedDevicesTable'])

/** The script for `args` (the command line after the program), or the reason it cannot be made. */
export function run (args: string[]): { output: string, code: 0 } | { error: string, code: 2 } {
  const [command, dialect, ...rest] = args
  if (command === '--help' || command === '-h') return { output: USAGE, code: 0 }
  if (command !== 'schema') return { error: `Unknown command ${JSON.stringify(command ?? '')}\n${USAGE}`, code: 2 }
  if (!(SQL_DIALECTS as readonly string[]).includes(dialect ?? '')) return { error: `Unknown dialect ${JSON.stringify(dialect ?? '')}\n${USAGE}`, code: 2 }
  const tables: Record<string, string> = {}
  for (let i = 0; i < rest.length; i += 2) {
    const name = optionName(rest[i]!)
    const value = rest[i + 1]
    if (!rest[i]!.startsWith('--') || !TABLE_OPTIONS.has(name)) return { error: `Unknown option ${rest[i]!}\n${USAGE}`, code: 2 }
    if (value === undefined || value === '' || value.startsWith('--')) return { error: `${rest[i]!} needs a table name`, code: 2 }
    tables[name] = value
  }
  try {
    return { output: schemaSql(dialect as SqlDialect, tables as SchemaTables), code: 0 }
  } catch (err) {
    return { error: (err as Error).message, code: 2 }
  }
}
