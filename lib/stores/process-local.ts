/**
 * Stores whose data only this process may use (SQLite: a file on this machine), marked when made so the plugin can
 * refuse them beside stores that instances share. A WeakSet, so nothing shows on the stores themselves.
 */
const processLocal = new WeakSet<object>()

export function markProcessLocal (store: object): void {
  processLocal.add(store)
}

export function isProcessLocal (store: unknown): boolean {
  return typeof store === 'object' && store !== null && processLocal.has(store)
}
