import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { HashingStats } from '../lib/index.js'

/** V8's growing factor for devices with little memory (1.3 ×), held while a login flood lasts. */
export const FLOOD_HEAP_GROWING_PERCENT = 30

export interface FloodMemoryOptions {
  /** How often the hashing queues are read. */
  everyMs?: number
  /** How long every queue must stay calm before V8 grows the heap its own way again. */
  calmMs?: number
  /** Node's command line: a host that set `--heap-growing-percent` there keeps it, and nothing is switched. */
  execArgv?: readonly string[]
  setFlags?: (flags: string) => void
  /** A full collection, so the tighter limit holds from the flood's start rather than from the next one. */
  collect?: () => void
}

/** V8's `gc()`, taken without exposing it to the app's own code. */
export function fullCollection (): void {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  setFlagsFromString('--no-expose-gc')
  gc()
}

/**
 * Keeps a login flood's memory bounded without taxing every request. Requests of a flood wait seconds in
 * the hashing queue, so V8 promotes what they allocate, and after each full collection it lets the old
 * generation grow to up to 4 × what survived (example/bench/README.md, Memory). `--heap-growing-percent=30`
 * on Node's command line bounds that (1.3 ×), but then ordinary traffic pays more full collections too.
 * V8 reads the flag at each full collection, so here it is set while a queue sheds or has more waiting
 * than 4 × its threads, with one full collection when the flood starts, and cleared once every queue has
 * been calm for `calmMs`. Returns a function that stops watching (and clears the flag).
 */
export function boundMemoryUnderFloods (queues: ReadonlyArray<() => HashingStats>, {
  everyMs = 100, calmMs = 5000, execArgv = process.execArgv, setFlags = setFlagsFromString, collect = fullCollection
}: FloodMemoryOptions = {}): () => void {
  if (execArgv.some((flag) => flag.startsWith('--heap-growing-percent') || flag.startsWith('--heap_growing_percent'))) return () => {}
  let shed = queues.map((read) => read().shed)
  let flooding = false
  let calmSince = 0
  const relax = (): void => {
    flooding = false
    setFlags('--heap-growing-percent=0')
  }
  const timer = setInterval(() => {
    const now = performance.now()
    const stats = queues.map((read) => read())
    const flooded = stats.some((s, i) => s.shed !== shed[i] || s.inFlight - s.running > 4 * s.threads)
    shed = stats.map((s) => s.shed)
    if (flooded) {
      calmSince = now
      if (!flooding) {
        flooding = true
        setFlags(`--heap-growing-percent=${FLOOD_HEAP_GROWING_PERCENT}`)
        collect()
      }
    } else if (flooding && now - calmSince >= calmMs) {
      relax()
    }
  }, everyMs).unref()
  return () => {
    clearInterval(timer)
    if (flooding) relax()
  }
}
