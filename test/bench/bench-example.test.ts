import t from 'tap'
import type { ExampleRounds } from '../../example/bench/example-section.js'
import type { LoadResult } from '../../example/bench/load.js'
import { checkTargets, pairedRatios, renderTable } from '../../example/bench/report.js'
import { emptyBenchResults } from '../helpers/bench-results.js'

const run = (path: string, okPerSecond: number): LoadResult => ({
  ...{ path, connections: 32, durationSeconds: 4, responses: okPerSecond * 4, perSecond: okPerSecond, okPerSecond, serverCpuMicrosPerResponse: 1e6 / okPerSecond },
  ...{ statuses: { 204: okPerSecond * 4 }, errors: 0, timeouts: 0, latency: { count: okPerSecond * 4, p50: 2, p99: 6, max: 9 }, byStatus: {} }
})

// Three rounds; in each, the example's Logout, the bench server's /hand/logout and Logout, and the same /hand/logout in the example's process.
const example = (exampleHand: number[]): ExampleRounds => ({
  me: [30_000, 26_000, 28_000].map((n) => run('/me', n)),
  plain: [15_000, 13_000, 14_000].map((n) => run('/plain', n)),
  benchMe: [32_000, 30_000, 31_000].map((n) => run('/me', n)),
  logout: [12_000, 9_000, 10_000].map((n) => run('/Auth/Logout', n)),
  handLogout: [16_000, 12_000, 10_000].map((n) => run('/hand/logout', n)),
  benchLogout: [13_000, 12_000, 11_000].map((n) => run('/Auth/Logout', n)),
  exampleHandLogout: exampleHand.map((n) => run('/hand/logout', n))
})

t.test('the example rows: Logout against the hand-written route in the bench server and in its own process, paired by round', async (t) => {
  const results = { ...emptyBenchResults(), example: example([14_400, 12_000, 8_000]) }
  const ratios = pairedRatios(results)
  t.same(ratios['example-logout']!.ratios, [0.75, 0.75, 1], 'the example\'s Logout over the bench server\'s /hand/logout')
  t.same(ratios['example-hand-logout']!.ratios, [0.9, 1, 0.8], 'the same route, example process over bench server: what the set-up costs')
  t.same(ratios['example-logout-own-hand']!.ratios.map((x) => Number(x.toFixed(4))), [0.8333, 0.75, 1.25], 'the plugin\'s Logout over the hand-written one in one process')
  const logout = checkTargets(results).find((target) => target.id === 'example-logout')!
  t.equal(logout.met, false, 'the target stays the bench server\'s /hand/logout (median 0.75)')
  const table = renderTable(results)
  t.match(table, /\| Example server: POST \/Auth\/Logout \|.*0\.75 × \/hand\/logout \(0\.75–1\.00, 3 pairs\); .*; 0\.83 × the same \/hand\/logout in its own process \(0\.75–1\.25, 3 pairs\)/)
  t.match(table, /\| Example server: POST \/hand\/logout, the bench server's hand-written route in its process \(what its set-up costs a request\) \|.*0\.90 × the same route in the bench server \(0\.80–1\.00, 3 pairs\)/)
})
