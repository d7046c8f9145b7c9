import t from 'tap'
import {
  accountsTableMysql, activityTableMysql, attemptsTableMysql, createMysqlSchema, mfaTableMysql, MysqlAccountStore, MysqlActivityStore, MysqlAttemptStore,
  MysqlMfaStore, MysqlOneTimeTokenStore, MysqlPasskeyStore, MysqlSessionStore, MysqlTrustedDeviceStore, mysqlSchemaSql, oneTimeTokensTableMysql,
  passkeysTableMysql, sessionsTableMysql, trustedDevicesTableMysql
} from '../../../lib/stores/mysql/index.js'
import { statementsOf } from '../../../lib/stores/mysql/sql.js'
import {
  accountStoreContract, attemptStoreContract, mfaStoreContract, oneTimeTokenStoreContract, passkeyStoreContract, sessionStoreContract, trustedDeviceStoreContract,
  type ContractCheck
} from '../../../lib/testing/index.js'
import { mysqlDatabase, mysqlUnavailable } from '../../helpers/mysql.js'

const HASH = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE'

type Pool = Awaited<ReturnType<typeof mysqlDatabase>>['pool']

async function run (pool: Pool, script: string): Promise<void> {
  for (const statement of statementsOf(script)) await pool.query(statement)
}

/** Every store contract, each check on a table of its own (named after its namespace). */
function contracts (pool: Pool): ContractCheck[] {
  const on = async <S>(namespace: string, ddl: (table: string) => string, make: (table: string) => S): Promise<S> => {
    await run(pool, ddl(namespace))
    return make(namespace)
  }
  return [
    ...accountStoreContract({
      create: async (namespace) => {
        const store = await on(namespace, accountsTableMysql, (table) => new MysqlAccountStore({ pool, table }))
        return { store, add: async (account) => (await store.add(account))!, setActive: async (id, active) => await store.setActive(id, active) }
      }
    }),
    ...sessionStoreContract({ create: async (namespace) => await on(namespace, sessionsTableMysql, (table) => new MysqlSessionStore({ pool, table })) }),
    ...attemptStoreContract({ create: async (namespace) => await on(namespace, attemptsTableMysql, (table) => new MysqlAttemptStore({ pool, table })) }),
    ...oneTimeTokenStoreContract({ create: async (namespace) => await on(namespace, oneTimeTokensTableMysql, (table) => new MysqlOneTimeTokenStore({ pool, table })) }),
    ...mfaStoreContract({ create: async (namespace) => await on(namespace, mfaTableMysql, (table) => new MysqlMfaStore({ pool, table })) }),
    ...passkeyStoreContract({ create: async (namespace) => await on(namespace, passkeysTableMysql, (table) => new MysqlPasskeyStore({ pool, table })) }),
    ...trustedDeviceStoreContract({ create: async (namespace) => await on(namespace, trustedDevicesTableMysql, (table) => new MysqlTrustedDeviceStore({ pool, table })) })
  ]
}

t.test('MySQL stores keep every store contract (MariaDB, InnoDB at REPEATABLE READ)', { skip: mysqlUnavailable }, async (t) => {
  const { pool } = await mysqlDatabase(t, 'contract')
  const [[isolation]] = await pool.query('SELECT @@tx_isolation AS level') as any
  t.equal(isolation.level, 'REPEATABLE-READ', 'the server\'s default isolation, unchanged')
  for (const check of contracts(pool)) await t.test(check.name, check.run)
})
