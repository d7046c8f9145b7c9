import t from 'tap'
import type { EnumerationResult } from '../../example/bench/enumeration.js'
import type { LoadResult } from '../../example/bench/load.js'
import type { PasskeyResult } from '../../example/bench/passkey.js'
import { checkTargets, pairedRatios, renderTable } from '../../example/bench/report.js'
import { emptyBenchResults } from '../helpers/bench-results.js'

const run = (path: string, okPerSecond: number, cpu: number): LoadResult => ({
  ...{ path, connections: 16, durationSeconds: 1280 / okPerSecond, responses: 1280, perSecond: okPerSecond, okPerSecond, serverCpuMicrosPerResponse: cpu },
  ...{ statuses: { 200: 1280 }, errors: 0, timeouts: 0, latency: { count: 1280, p50: 5, p99: 20, max: 30 }, byStatus: {} }
})

t.test('the passkey row: sign-ins priced against Refresh, and their CPU against Refresh\'s plus one verification, both paired by round', async (t) => {
  // Round i: a sign-in (LoginOptions + LoginPasskey) and the same round's Refresh.
  const round = (signIns: number, refresh: number, signInCpu: number, refreshCpu: number): PasskeyResult['rounds'][number] => ({
    options: run('/Auth/Passkeys/LoginOptions', 4 * signIns, 100),
    loginPasskey: run('/Auth/LoginPasskey', 1.25 * signIns, signInCpu - 100),
    refresh: run('/Auth/Refresh', refresh, refreshCpu),
    signInsPerSecond: signIns,
    signInCpuMicros: signInCpu
  })
  const passkey: PasskeyResult = {
    passkeys: 64,
    rounds: [round(500, 2500, 1300, 300), round(600, 2000, 1100, 100), round(550, 2750, 1200, 200)],
    verificationCpuMicros: { plugin: 1000, raw: 60 }
  }
  const ratios = pairedRatios({ ...emptyBenchResults(), passkey })
  t.same(ratios.passkey!.ratios, [0.2, 0.3, 0.2], 'sign-ins/s over the same round\'s refreshes/s')
  t.same(ratios['passkey-cpu']!.ratios, [1, 1, 1], 'each round\'s sign-in CPU over that round\'s Refresh CPU plus the verification')
  t.same(checkTargets({ ...emptyBenchResults(), passkey }), [], 'priced, not a pass/fail target')
  const table = renderTable({ ...emptyBenchResults(), passkey })
  t.match(table, /\| Passkey sign-in: LoginOptions \+ LoginPasskey;.*\(1000 µs in the bench's process; raw `crypto.verify` 60 µs\) \| 500\.0 sign-ins\/s \|/)
  t.match(table, /0\.20 × Refresh \(0\.20–0\.30, 3 pairs\)/)
  t.match(table, /CPU ≈ Refresh \+ one verification \(1300 µs\): 1\.00 × that \(1\.00–1\.00, 3 pairs\)/, 'the median pair\'s expectation and the paired ratio')
})

t.test('the ChangeEmail probe is met with medians within 10 % and one answer size for every kind', async (t) => {
  const summary = (p50: number) => ({ count: 100, p50, p99: p50 * 2, max: p50 * 3 })
  const probe = (bytes: number[], p50s: number[]): EnumerationResult => ({
    route: 'changeEmail',
    durationSeconds: 4.5,
    statuses: { 202: 400 },
    byKind: { unknownEmail: summary(p50s[0]!), pendingAddress: summary(p50s[1]!), activeAccount: summary(p50s[2]!), ownAddress: summary(p50s[3]!) },
    bytesByKind: { unknownEmail: [109], pendingAddress: [109], activeAccount: [bytes[0]!], ownAddress: bytes },
    medianSpread: (Math.max(...p50s) - Math.min(...p50s)) / Math.min(...p50s)
  })
  const target = (r: EnumerationResult) => checkTargets({ ...emptyBenchResults(), changeEmailEnumeration: r }).find((x) => x.id === 'change-email-enumeration')!
  t.equal(target(probe([109], [1.2, 1.25, 1.22, 1.21])).met, true)
  t.equal(target(probe([109, 111], [1.2, 1.25, 1.22, 1.21])).met, false, 'two answer sizes: a miss')
  t.equal(target(probe([109], [1.2, 1.5, 1.22, 1.21])).met, false, '25 % slower: a miss')
  t.match(renderTable({ ...emptyBenchResults(), changeEmailEnumeration: probe([109, 111], [1.2, 1.25, 1.22, 1.21]) }),
    /ChangeEmail, medians: free \/ pending \/ taken \/ own address \(400 interleaved\); answer bytes \(headers \+ body\): 109 \/ 109 \/ 109 \/ 109 or 111 \| +\| 1\.20 ms \/ 1\.25 ms \/ 1\.22 ms \/ 1\.21 ms/)
})
