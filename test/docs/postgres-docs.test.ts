import t from 'tap'
import { accountsTableSql, accountsTriggerSql, attemptsTableSql, mfaTableSql, oneTimeTokensTableSql, passkeysTableSql, sessionsTableSql, trustedDevicesTableSql } from '../../lib/stores/postgres/index.js'
import { between, docBlock, MOVING_IN_GUIDE, PRODUCTION_GUIDE, repoFile } from '../helpers/docs.js'

// The DDL lives in lib/stores/postgres/ only; the production guide and the example show exactly what it renders.
const schema = [accountsTableSql(), sessionsTableSql(), attemptsTableSql(), oneTimeTokensTableSql(), mfaTableSql(), passkeysTableSql(), trustedDevicesTableSql()].join('\n')

t.test('the production guide shows the DDL the schema helpers run', async (t) => {
  t.equal(docBlock(PRODUCTION_GUIDE, 'postgres-schema'), schema)
})

t.test('the PostgreSQL example\'s header comment shows the same DDL', async (t) => {
  const header = between(repoFile('example/stores/postgres.ts'), '// postgres-schema:begin', '// postgres-schema:end')
  t.equal(header.split('\n').map((line) => line.replace(/^\/\/ {0,3}/, '')).join('\n'), schema)
})

t.test('the moving-in guide shows the trigger accountsTriggerSql renders for its example mapping', async (t) => {
  t.equal(docBlock(MOVING_IN_GUIDE, 'moving-in-trigger'), accountsTriggerSql({ table: 'users', columns: { active: 'is_active' } }))
})

t.test('the moving-in guide shows the Better Auth store of the example, as a package user imports it', async (t) => {
  const code = repoFile('example/better-auth-store.ts')
    .replace("'../lib/index.js'", "'fastify-password-auth'")
    .replace("'../lib/stores/postgres/index.js'", "'fastify-password-auth/postgres'")
  t.equal(`${docBlock(MOVING_IN_GUIDE, 'better-auth-store')}\n`, code)
})

t.test('the password reset guide shows the example server\'s message template as it is', async (t) => {
  t.ok(repoFile('example/mailer.ts').includes(docBlock('example/docs/password-reset.md', 'reset-template')))
})
