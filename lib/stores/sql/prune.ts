/**
 * Background housekeeping: the returned function starts `prune` at most once per `intervalMs` (a call in between does
 * nothing), without waiting for it (a driver's promise) or within the call (better-sqlite3's synchronous run); a
 * failed prune is retried at the next interval.
 */
export function pruneNowAndThen (prune: () => unknown, intervalMs: number): () => void {
  let next = 0
  return () => {
    const now = Date.now()
    if (now < next) return
    next = now + intervalMs
    try {
      const pruning = prune()
      if (pruning instanceof Promise) pruning.catch(() => {})
    } catch {}
  }
}
