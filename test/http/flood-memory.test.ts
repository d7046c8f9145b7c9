import { execFileSync } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { HashingStats } from '../../lib/index.js'
import { boundMemoryUnderFloods, FLOOD_HEAP_GROWING_PERCENT } from '../../example/flood-memory.js'

const TIGHT = `--heap-growing-percent=${FLOOD_HEAP_GROWING_PERCENT}`
const CALM = '--heap-growing-percent=0'

function watched (queues: HashingStats[], execArgv: string[] = []): { flags: string[], collections: () => number, stop: () => void } {
  const flags: string[] = []
  let collections = 0
  const stop = boundMemoryUnderFloods(queues.map((stats) => () => ({ ...stats })), {
    everyMs: 5, calmMs: 60, execArgv, setFlags: (flag) => { flags.push(flag) }, collect: () => { collections++ }
  })
  return { flags, collections: () => collections, stop }
}

const idle = (): HashingStats => ({ verifications: 0, hashes: 0, shed: 0, inFlight: 0, running: 0, threads: 2 })

t.test('a queue that sheds tightens the heap\'s growth at once, with one full collection; calm queues relax it', async (t) => {
  const api = idle()
  const browser = idle()
  const { flags, collections, stop } = watched([api, browser])
  t.teardown(stop)
  await sleep(30)
  t.same(flags, [], 'no flood, nothing set: ordinary requests pay no extra collections')
  Object.assign(browser, { shed: 1, inFlight: 66, running: 2 })
  await sleep(30)
  t.same(flags, [TIGHT], 'the browser app\'s queue counts as well')
  t.equal(collections(), 1)
  Object.assign(browser, { shed: 1, inFlight: 0, running: 0 })
  await sleep(150)
  t.same(flags, [TIGHT, CALM], 'relaxed once every queue stayed calm')
  Object.assign(api, { shed: 5 })
  await sleep(30)
  t.same(flags, [TIGHT, CALM, TIGHT], 'the next flood tightens it again')
  t.equal(collections(), 2)
  stop()
  t.same(flags, [TIGHT, CALM, TIGHT, CALM], 'stopping mid-flood clears it')
})

t.test('more waiting than 4 × the threads is a flood; a few logins waiting are not', async (t) => {
  const api = { ...idle(), inFlight: 10, running: 2 }
  const { flags, stop } = watched([api])
  t.teardown(stop)
  await sleep(30)
  t.same(flags, [], '8 waiting on 2 threads')
  api.inFlight = 11
  await sleep(30)
  t.same(flags, [TIGHT], '9 waiting on 2 threads')
})

t.test('a --heap-growing-percent given on Node\'s command line is left as the host set it', async (t) => {
  const api = { ...idle(), shed: 0 }
  const { flags, collections, stop } = watched([api], ['--max-semi-space-size=8', '--heap-growing-percent=50'])
  t.teardown(stop)
  api.shed = 3
  await sleep(30)
  t.same(flags, [])
  t.equal(collections(), 0)
})

// What the switch rests on: V8 reads the flag at each full collection, not only when it makes the heap.
const COUNT_MAJOR_GCS = `
const { PerformanceObserver, constants } = require('node:perf_hooks')
const v8 = require('node:v8')
let majors = 0
new PerformanceObserver((list) => { for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++ }).observe({ entryTypes: ['gc'] })
if (process.argv[1] !== 'unset') v8.setFlagsFromString('${TIGHT}')
if (process.argv[1] === 'cleared') v8.setFlagsFromString('${CALM}')
const live = []
for (let i = 0; i < 100000; i++) live.push({ i, s: 'x' + i })
const ring = new Array(20000)
for (let i = 0; i < 1.5e6; i++) ring[i % ring.length] = { i, a: [i, i + 1] }
setTimeout(() => console.log(majors), 50)
`

t.test('V8 reads a growing percent set while the process runs: it collects more often until the flag is cleared', async (t) => {
  const majors = (mode: string): number => Number(execFileSync(process.execPath, ['--max-semi-space-size=1', '-e', COUNT_MAJOR_GCS, mode], { encoding: 'utf8' }))
  const unset = majors('unset')
  const set = majors('set')
  t.ok(set >= unset * 1.3, `set at run time: ${set} full collections, against ${unset} with V8's own growth`)
  const cleared = majors('cleared')
  t.ok(cleared * 1.3 <= set, `set, then cleared: ${cleared} full collections, V8's own growth again`)
})
