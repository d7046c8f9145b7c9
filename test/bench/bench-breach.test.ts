import t from 'tap'
import type { BreachResult } from '../../example/bench/breach.js'
import type { LoadResult } from '../../example/bench/load.js'
import { pairedRatio } from '../../example/bench/pairs.js'
import { breachHangLimit, checkTargets, renderTable, type BenchResults } from '../../example/bench/report.js'
import { emptyBenchResults } from '../helpers/bench-results.js'

const run = (okPerSecond: number): LoadResult => ({
  ...{ path: '/Auth/Login', connections: 16, durationSeconds: 4, responses: okPerSecond * 4, perSecond: okPerSecond, okPerSecond },
  ...{ statuses: { 200: okPerSecond * 4 }, errors: 0, timeouts: 0, latency: { count: 1, p50: 80, p99: 120, max: 130 }, byStatus: {} }
})

function results (plain: number[], checked: number[], hang: Partial<BreachResult['hang']> = {}): BenchResults {
  const breach: BreachResult = {
    rounds: { plain: plain.map(run), checked: checked.map(run) },
    cost: pairedRatio(plain, checked),
    hang: { timeoutMs: 1500, alone: { median: 20, max: 40 }, latencies: [1540, 1560, 1580, 1600], concurrency: 4, statuses: [200, 200, 200, 200], ...hang }
  }
  return { ...emptyBenchResults(), breach }
}

t.test('the breach targets: cost per login ≤ 1.02 × (paired), and every Login a 200 within timeout + hash while the service hangs', async (t) => {
  const byId = (r: BenchResults) => Object.fromEntries(checkTargets(r).map((target) => [target.id, target]))
  const met = byId(results([180, 170, 175], [178, 169, 174]))
  t.equal(met['breach-login']!.met, true)
  t.ok(Math.abs(met['breach-login']!.value - 170 / 169) < 1e-9, 'the median pair\'s plain / checked rate')
  t.equal(met['breach-hang']!.met, true)
  t.equal(breachHangLimit(results([1], [1]).breach!.hang), 1500 + 40 * 2 + 50)

  t.equal(byId(results([180, 170, 175], [170, 160, 168]))['breach-login']!.met, false, '5 % dearer is a miss')
  t.equal(byId(results([1], [1], { latencies: [1540, 1700] }))['breach-hang']!.met, false, 'past timeout + hash')
  t.equal(byId(results([1], [1], { statuses: [200, 503, 200, 200] }))['breach-hang']!.met, false, 'an answer that is not a 200')

  const table = renderTable(results([180, 170, 175], [178, 169, 174]))
  t.match(table, /POST \/Auth\/Login with the breached-password check, warm cache/)
  t.match(table, /cost 1\.01 × without the check \(/)
  t.match(table, /while the range service hangs \(timeout 1500 ms/)
})
