/**
 * The `sql` section: Login, GET /me and Refresh with every store (accounts, sessions, attempt counters, one-time
 * tokens) in PostgreSQL, in SQLite and in MySQL, on three servers that differ only in that, measured A B C, A B C,
 * A B C route by route. SQLite and MySQL are priced against PostgreSQL as paired ratios.
 */
import { load, type LoadResult } from './load.js'
import { okRates, pairedRatio, type PairedRatio } from './pairs.js'
import { expectOk, LOGIN_CONNECTIONS, loginLoad, loginSessions, log, refresh, ROUTE_CONNECTIONS, routeLoad, startServer, type Server, type ServerProfile } from './scenarios.js'
import { SQL_BENCH_DIALECTS, type SqlDialect } from './sql-stores.js'

export const SQL_ROUTES = ['login', 'me', 'refresh'] as const
export type SqlRoute = typeof SQL_ROUTES[number]

export interface SqlSection {
  /** The dialects measured (those whose server answered), PostgreSQL first. */
  dialects: SqlDialect[]
  descriptions: Partial<Record<SqlDialect, string>>
  rounds: Record<SqlRoute, Partial<Record<SqlDialect, LoadResult[]>>>
  /** SQLite and MySQL over PostgreSQL, pair by pair (successful answers per second). */
  ratios: Record<SqlRoute, Partial<Record<SqlDialect, PairedRatio>>>
}

export interface SqlSetup {
  profile: ServerProfile
  /** The dialects whose databases answer. */
  dialects: SqlDialect[]
  /** Each server's environment but BENCH_SQL and BENCH_SQL_LABEL (database URLs, pool size). */
  env: Record<string, string>
  /** A schema, file or database name per dialect. */
  label: (dialect: SqlDialect) => string
  rounds: number
  seconds: number
}

async function measure (server: Server, route: SqlRoute, tokens: string[], seconds: number, round: number): Promise<LoadResult> {
  switch (route) {
    case 'login': return await load(loginLoad(server, LOGIN_CONNECTIONS, seconds))
    case 'me': return await load(routeLoad(server, '/me', tokens, seconds, round))
    // Fresh sessions each round (accounts 300 …): a session carried over from the last round would be replayed.
    case 'refresh': return await refresh(server, (await loginSessions(server, ROUTE_CONNECTIONS, 300 + round * ROUTE_CONNECTIONS)).map(({ refreshToken }) => refreshToken), seconds, round)
  }
}

export async function sqlSection (setup: SqlSetup): Promise<SqlSection> {
  const dialects = SQL_BENCH_DIALECTS.filter((dialect) => setup.dialects.includes(dialect))
  const servers = new Map<SqlDialect, Server>()
  try {
    for (const dialect of dialects) {
      servers.set(dialect, await startServer(setup.profile, { ...setup.env, BENCH_SQL: dialect, BENCH_SQL_LABEL: setup.label(dialect) }, `sql-${dialect}`))
    }
    const tokens = new Map<SqlDialect, string[]>()
    const descriptions: SqlSection['descriptions'] = {}
    for (const [dialect, server] of servers) {
      const own = (await loginSessions(server, ROUTE_CONNECTIONS)).map(({ accessToken }) => accessToken)
      tokens.set(dialect, own)
      await expectOk(server, '/me', own[0]!)
      descriptions[dialect] = (await (await fetch(`${server.url}/bench/stats`)).json() as { stores: string }).stores
      // Warm-up: every pooled connection has run every statement once.
      await load(routeLoad(server, '/me', own, 1))
      await load(loginLoad(server, LOGIN_CONNECTIONS, 1))
    }
    const rounds = Object.fromEntries(SQL_ROUTES.map((route) => [route, {}])) as SqlSection['rounds']
    for (let round = 1; round <= setup.rounds; round++) {
      for (const route of SQL_ROUTES) {
        for (const [dialect, server] of servers) {
          const result = await measure(server, route, tokens.get(dialect)!, setup.seconds, round)
          log(`${route}, every store in ${dialect}, round ${round}: ${result.okPerSecond.toFixed(0)} ok/s, statuses ${JSON.stringify(result.statuses)}`)
          ;(rounds[route][dialect] ??= []).push(result)
        }
      }
    }
    const ratios = Object.fromEntries(SQL_ROUTES.map((route) => {
      const postgres = rounds[route].postgres
      const against = postgres === undefined
        ? {}
        : Object.fromEntries(dialects.filter((dialect) => dialect !== 'postgres').map((dialect) => [dialect, pairedRatio(okRates(rounds[route][dialect]!), okRates(postgres))]))
      return [route, against]
    })) as SqlSection['ratios']
    return { dialects, descriptions, rounds, ratios }
  } finally {
    await Promise.all([...servers.values()].map(async (server) => { await server.stop() }))
  }
}
