// Every store in MySQL or MariaDB (DATABASE_URL=mysql://user:password@host:3306/database); with REDIS_URL, sessions,
// attempt counters, one-time tokens and trusted devices move to Redis as they do beside PostgreSQL. The tables are
// created at start if missing (createMysqlSchema: the DDL of mysqlSchemaSql(), statement by statement).
import mysql from 'mysql2/promise'
import {
  createMysqlSchema, MysqlAccountStore, MysqlActivityStore, MysqlAttemptStore, MysqlMfaStore, MysqlOneTimeTokenStore, MysqlPasskeyStore,
  MysqlSessionStore, MysqlTrustedDeviceStore
} from '../../lib/stores/mysql/index.js'
import type { ServerStores } from './types.js'

export async function mysqlStores (uri: string): Promise<ServerStores> {
  // Bounded connects: a dead or blackholed server fails requests fast (the plugin's store deadline bounds the rest).
  const pool = mysql.createPool({ uri, connectionLimit: 10, connectTimeout: 2000, enableKeepAlive: true })
  await createMysqlSchema(pool).catch(async (err: Error) => {
    await pool.end().catch(() => {})
    throw new Error(`DATABASE_URL: cannot set up the tables in MySQL (${err.message})`)
  })
  const accounts = new MysqlAccountStore({ pool })
  return {
    accounts,
    sessions: new MysqlSessionStore({ pool }),
    attempts: new MysqlAttemptStore({ pool }),
    oneTimeTokens: new MysqlOneTimeTokenStore({ pool }),
    mfa: new MysqlMfaStore({ pool }),
    passkeys: new MysqlPasskeyStore({ pool }),
    activity: new MysqlActivityStore({ pool }),
    trustedDevices: new MysqlTrustedDeviceStore({ pool }),
    seed: async (seeds) => { for (const seed of seeds) await accounts.add(seed, { ifAbsent: true }) },
    healthCheck: async () => { await pool.query('SELECT 1') },
    close: async () => { await pool.end() }
  }
}
