/**
 * The `example` section: the example server as a user starts it (`npm start`: every feature on, the
 * README's logger at LOG_LEVEL=warn, memory stores), against the hand-written routes of the bench server
 * beside it, in interleaved rounds: GET /me against /plain (and the bench server's own /me), and Logout
 * against /hand/logout (and the bench server's own Logout). A cost that the README's configuration adds
 * to every request shows here and not on the bench server, which runs without a logger; the same
 * /hand/logout inside the example's process (example-preload.ts) against the bench server's prices it
 * apart from the plugin's own cost. The order of a round's runs turns every round (A B C, C B A, …), and
 * the section has many short rounds (run.ts: 15 of 1 s): one route's speed drifts by a third from run to run
 * on the bench machine, and five 4-s pairs could not tell 0.85 from 0.9 (example/bench/README.md).
 */
import type { LoadResult } from './load.js'
import { load } from './load.js'
import { startExampleServer } from './overload.js'
import { expectOk, log, loginSessions, logout, routeLoad, ROUTE_CONNECTIONS, type Server } from './scenarios.js'

export interface ExampleRounds {
  /** The example server's GET /me, the bench server's /plain and /me, one of each per round. */
  me: LoadResult[]
  plain: LoadResult[]
  benchMe: LoadResult[]
  /** The example server's Logout, the bench server's /hand/logout and Logout, one of each per round. */
  logout: LoadResult[]
  handLogout: LoadResult[]
  benchLogout: LoadResult[]
  /** The same /hand/logout inside the example server's process (example-preload.ts), one per round. */
  exampleHandLogout: LoadResult[]
}

export async function exampleSection (bench: Server, benchTokens: string[], runId: string, rounds: number, seconds: number): Promise<ExampleRounds> {
  const example = await startExampleServer(runId, true)
  try {
    const tokens = (await loginSessions(example, ROUTE_CONNECTIONS)).map(({ accessToken }) => accessToken)
    await expectOk(example, '/me', tokens[0]!)
    const gets: Array<[Server, string, string[]]> = [[example, '/me', tokens], [bench, '/plain', benchTokens], [bench, '/me', benchTokens]]
    for (const [server, path, list] of gets) await load(routeLoad(server, path, list, 1)) // warm-up
    // A warm-up of each Logout tells how many tokens a run of about `seconds` spends.
    const logouts = [[example, '/Auth/Logout'], [bench, '/hand/logout'], [bench, '/Auth/Logout'], [example, '/hand/logout']] as const
    const rates = []
    for (const [server, path] of logouts) rates.push((await logout(server, path, 20_000, 1)).perSecond)
    const result: ExampleRounds = { me: [], plain: [], benchMe: [], logout: [], handLogout: [], benchLogout: [], exampleHandLogout: [] }
    const getLists = [result.me, result.plain, result.benchMe]
    const logoutLists = [result.logout, result.handLogout, result.benchLogout, result.exampleHandLogout]
    for (let round = 1; round <= rounds; round++) {
      // A B C, then C B A: on a VM whose speed drifts within a round, no target is always first or always last.
      const forth = round % 2 === 1
      for (const i of forth ? [0, 1, 2] : [2, 1, 0]) {
        const [server, path, list] = gets[i]!
        getLists[i]!.push(await load(routeLoad(server, path, list, seconds, round)))
      }
      for (const i of forth ? [0, 1, 2, 3] : [3, 2, 1, 0]) {
        const [server, path] = logouts[i]!
        logoutLists[i]!.push(await logout(server, path, rates[i]!, seconds, round))
      }
      const rate = (list: LoadResult[]): string => list.at(-1)!.okPerSecond.toFixed(0)
      log(`example round ${round}: GET /me ${rate(result.me)}/s (bench server: /plain ${rate(result.plain)}/s, /me ${rate(result.benchMe)}/s); ` +
        `Logout ${rate(result.logout)}/s, its own /hand/logout ${rate(result.exampleHandLogout)}/s (bench server: /hand/logout ${rate(result.handLogout)}/s, Logout ${rate(result.benchLogout)}/s)`)
    }
    return result
  } finally {
    await example.stop()
  }
}
