/** Each store's table name (each default is `auth_<store>`), as the stores' `table` options take them. */
export interface SqlTables {
  accountsTable?: string
  sessionsTable?: string
  attemptsTable?: string
  oneTimeTokensTable?: string
  mfaTable?: string
  activityTable?: string
  passkeysTable?: string
  trustedDevicesTable?: string
}

/** A dialect's DDL function for each store (each takes its table name, or makes the default). */
export type TableDdl = { [K in keyof Required<SqlTables>]: (table?: string) => string }

/** The stores in the order their DDL runs: accounts first. */
const STORES: ReadonlyArray<keyof SqlTables> = [
  'accountsTable', 'sessionsTable', 'attemptsTable', 'oneTimeTokensTable', 'mfaTable', 'activityTable', 'passkeysTable', 'trustedDevicesTable'
]

/** Every store's DDL for one dialect, as one script. */
export function schemaScript (ddl: TableDdl, tables: SqlTables = {}): string {
  return STORES.map((store) => ddl[store](tables[store])).join('\n')
}
