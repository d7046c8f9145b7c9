/**
 * The price of unnamed statements (`preparedStatements: false`, what a transaction pooler needs): GET /me
 * with accounts in PostgreSQL and sessions in Redis, on two servers that differ only in that option,
 * measured A B, A B, A B. PostgreSQL parses and plans an unnamed statement at every call; a named one once
 * per connection.
 */
import { load, type LoadResult } from './load.js'
import { pairedRatio, type PairedRatio } from './pairs.js'
import { expectOk, log, loginTokens, median, routeLoad, startServer, type Server, type ServerProfile } from './scenarios.js'

export interface StatementsPair {
  named: LoadResult
  unnamed: LoadResult
  /** Unnamed over named, pair by pair (GET /me responses per second). */
  ratio: PairedRatio
  rounds: { named: LoadResult[], unnamed: LoadResult[] }
}

export interface StatementsSetup {
  profile: ServerProfile
  /** The server's environment but the schema, key prefix and option, which this sets per server. */
  env: Record<string, string>
  /** A schema and key prefix per server, from its label. */
  schema: (label: string) => string
  prefix: (label: string) => string
  rounds: number
  seconds: number
  connections: number
}

export async function statementsPair (setup: StatementsSetup): Promise<StatementsPair> {
  const servers: Server[] = []
  try {
    for (const label of ['named', 'unnamed']) {
      servers.push(await startServer(setup.profile, {
        ...setup.env, BENCH_PG_SCHEMA: setup.schema(label), BENCH_REDIS_PREFIX: setup.prefix(label), BENCH_PG_PREPARED: String(label === 'named')
      }, `postgres-${label}`))
    }
    const tokens = await Promise.all(servers.map(async (server) => await loginTokens(server, setup.connections)))
    for (const [i, server] of servers.entries()) {
      await expectOk(server, '/me', tokens[i]![0]!)
      await load(routeLoad(server, '/me', tokens[i]!, 1)) // warm-up: every pooled connection has run it
    }
    const rounds: { named: LoadResult[], unnamed: LoadResult[] } = { named: [], unnamed: [] }
    for (let round = 1; round <= setup.rounds; round++) {
      for (const [i, label] of (['named', 'unnamed'] as const).entries()) {
        const result = await load(routeLoad(servers[i]!, '/me', tokens[i]!, setup.seconds, round))
        log(`GET /me, ${label} statements, round ${round}: ${result.okPerSecond.toFixed(0)} req/s, statuses ${JSON.stringify(result.statuses)}`)
        rounds[label].push(result)
      }
    }
    const rate = (runs: LoadResult[]): number[] => runs.map((run) => run.okPerSecond)
    return { named: median(rounds.named), unnamed: median(rounds.unnamed), ratio: pairedRatio(rate(rounds.unnamed), rate(rounds.named)), rounds }
  } finally {
    await Promise.all(servers.map(async (server) => { await server.stop() }))
  }
}
