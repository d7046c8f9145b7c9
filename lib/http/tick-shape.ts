import { executionAsyncResource } from 'node:async_hooks'

/** The first tick object this process queued after the pin was asked for: kept for the process's life. */
let pinned: object | undefined
let asked = false

/**
 * Keeps one of Node's tick objects (what `process.nextTick` queues) alive for good, so the hidden classes
 * (V8 maps) of its shape never die. Node's streams call `process.nextTick` several times per HTTP request,
 * and each call builds its tick object from a literal with computed keys. Between bursts of traffic no tick
 * object is alive, so a full collection then (V8's memory reducer runs some whenever a busy process goes idle)
 * frees those maps, and the next call makes new ones. The literal's inline caches count each new map: after
 * four, they turn megamorphic for the life of the process and every tick object is built in V8's runtime,
 * about 2 µs more per request on `GET /me` (example/bench/README.md, "Tick objects and idle collections"). Whether a server
 * got there depended on how many idle collections it happened to go through; with one tick object held,
 * the maps stay and the caches keep their first one. Costs one small object; idempotent.
 */
export function pinTickObjectShape (): void {
  if (asked) return
  asked = true
  process.nextTick(() => { pinned = executionAsyncResource() })
}

/** The pinned tick object, once the tick after the first pin has run (for tests). */
export function pinnedTickObject (): object | undefined {
  return pinned
}
