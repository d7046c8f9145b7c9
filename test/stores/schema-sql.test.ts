import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import t from 'tap'
import { accountsTableMysql, mysqlSchemaSql } from '../../lib/stores/mysql/index.js'
import { createPostgresSchema, sessionsTableSql } from '../../lib/stores/postgres/index.js'
import { run } from '../../lib/stores/schema/command.js'
import { schemaSql, SQL_DIALECTS } from '../../lib/stores/schema/index.js'
import { sqliteSchemaSql } from '../../lib/stores/sqlite/index.js'
import { repoPath } from '../helpers/root.js'

/** The script createPostgresSchema sends, without its advisory lock. */
async function postgresScript (tables: Parameters<typeof createPostgresSchema>[1] = {}): Promise<string> {
  let sent = ''
  await createPostgresSchema({ query: async ({ text }) => { sent = text; return { rows: [], rowCount: 0 } } }, tables)
  return sent.split('\n').slice(1).join('\n')
}

t.test('schemaSql gives, per dialect, what the stores\' own schema functions run', async (t) => {
  t.same(SQL_DIALECTS, ['postgres', 'mysql', 'sqlite'])
  t.equal(schemaSql('postgres'), await postgresScript())
  t.equal(schemaSql('mysql'), mysqlSchemaSql())
  t.equal(schemaSql('sqlite'), sqliteSchemaSql())
  const tables = { accountsTable: 'users', sessionsTable: 'app.sessions', trustedDevicesTable: 'devices' }
  t.equal(schemaSql('postgres', tables), await postgresScript(tables))
  t.equal(schemaSql('mysql', tables), mysqlSchemaSql(tables))
  t.match(schemaSql('mysql', tables), accountsTableMysql('users'))
  t.match(schemaSql('postgres', tables), sessionsTableSql('app.sessions'))
  t.throws(() => schemaSql('mssql' as never), /schemaSql: the dialect must be one of postgres, mysql, sqlite, got "mssql"/)
  for (const dialect of SQL_DIALECTS) {
    const ddl = schemaSql(dialect)
    for (const table of ['auth_accounts', 'auth_sessions', 'auth_attempts', 'auth_one_time_tokens', 'auth_mfa', 'auth_activity', 'auth_passkeys', 'auth_trusted_devices']) {
      t.match(ddl, new RegExp(`CREATE TABLE IF NOT EXISTS ["\`]${table}["\`]`), `${dialect}: ${table}`)
    }
  }
})

t.test('the command: a dialect and table names in, the script out; anything else refused with the usage', async (t) => {
  t.same(run(['schema', 'mysql']), { output: mysqlSchemaSql(), code: 0 })
  t.same(run(['schema', 'postgres', '--accounts-table', 'users', '--one-time-tokens-table', 'links']),
    { output: schemaSql('postgres', { accountsTable: 'users', oneTimeTokensTable: 'links' }), code: 0 })
  t.match(run(['--help']), { code: 0, output: /^Usage: fastify-password-auth schema <postgres\|mysql\|sqlite>/ })
  t.match(run([]), { code: 2, error: /^Unknown command ""\nUsage:/ })
  t.match(run(['schema', 'oracle']), { code: 2, error: /^Unknown dialect "oracle"/ })
  t.match(run(['schema', 'sqlite', '--users-table', 'x']), { code: 2, error: /^Unknown option --users-table/ })
  t.match(run(['schema', 'sqlite', '--accounts-table']), { code: 2, error: '--accounts-table needs a table name' })
  t.match(run(['schema', 'postgres', '--accounts-table', 'a..b']), { code: 2, error: /Invalid PostgreSQL table name/ })
})

t.test('the package\'s bin prints the DDL (npx fastify-password-auth schema mysql), and exits 2 on a mistake', async (t) => {
  const manifest = JSON.parse(await readFile(repoPath('package.json'), 'utf8')) as { name: string, bin: Record<string, string> }
  const bin = repoPath(manifest.bin[manifest.name]!)
  t.match(await readFile(bin, 'utf8'), /^#!\/usr\/bin\/env node\n/, 'runnable as a bin')
  const { stdout } = await promisify(execFile)(process.execPath, [bin, 'schema', 'mysql'])
  t.equal(stdout, `${mysqlSchemaSql()}\n`)
  const failed = await promisify(execFile)(process.execPath, [bin, 'schema']).then(() => undefined, (err: { code: number, stderr: string }) => err)
  t.match(failed, { code: 2, stderr: /Unknown dialect ""/ })
})
