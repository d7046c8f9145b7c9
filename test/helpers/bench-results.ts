import type { BenchResults } from '../../example/bench/report.js'

/** Bench results with nothing measured yet, on a made-up machine: a test adds the sections it checks. */
export const emptyBenchResults = (): BenchResults => ({
  runId: 'x',
  date: '',
  machine: { cpus: 2, cpuModel: 'x', memoryGiB: 1, node: 'v20', platform: 'linux' },
  settings: { argon2: { memoryCost: 19456, timeCost: 2, parallelism: 1 }, mixedRate: 400, accounts: 2000 },
  profiles: {} as BenchResults['profiles'],
  notes: []
})
