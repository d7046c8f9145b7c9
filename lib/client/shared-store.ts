/**
 * What every tab of the origin must read at once, kept in IndexedDB: a write committed by one tab is what
 * the next reader in any tab sees (localStorage reaches other tabs late in Chromium, so tabs refreshed twice).
 * Without IndexedDB (or when it fails), a memory map: this tab alone, which is still safe (see tabs.ts).
 */
export interface SharedStore {
  get: <T>(key: string) => Promise<T | undefined>
  /** `undefined` deletes. */
  set: (key: string, value: unknown) => Promise<void>
  /**
   * Takes the lease `key` for `ms` unless another owner holds a live one, in one readwrite transaction (IndexedDB
   * runs those one at a time across the origin's tabs): Web Locks' stand-in. Without IndexedDB this tab is alone: true.
   */
  claim: (key: string, owner: string, ms: number) => Promise<boolean>
  /** Lets the lease go, if `owner` still holds it. */
  release: (key: string, owner: string) => Promise<void>
}

interface Lease { owner: string, until: number }

export function openSharedStore (name: string): SharedStore {
  const memory = new Map<string, unknown>()
  let database: Promise<IDBDatabase | undefined> | undefined
  const open = async (): Promise<IDBDatabase | undefined> => await (database ??= new Promise((resolve) => {
    try {
      const request = indexedDB.open(name, 1)
      request.onupgradeneeded = () => { request.result.createObjectStore('kv') }
      request.onsuccess = () => { resolve(request.result) }
      request.onerror = () => { resolve(undefined) }
      request.onblocked = () => { resolve(undefined) }
    } catch {
      resolve(undefined)
    }
  }))

  async function run<T> (mode: IDBTransactionMode, operation: (store: IDBObjectStore) => IDBRequest): Promise<T | undefined> {
    const db = await open()
    if (db === undefined) throw new Error('no IndexedDB')
    return await new Promise((resolve, reject) => {
      const transaction = db.transaction('kv', mode)
      const request = operation(transaction.objectStore('kv'))
      // Resolved once committed: a tab that reads after this sees it.
      transaction.oncomplete = () => { resolve(request.result as T | undefined) }
      transaction.onerror = transaction.onabort = () => { reject(transaction.error ?? new Error('IndexedDB transaction failed')) }
    })
  }

  /** Reads `key` and writes what `next` makes of it (undefined: nothing), in one readwrite transaction; resolves with `next`'s verdict. */
  async function update (key: string, next: (lease: Lease | undefined) => { write?: Lease | null, verdict: boolean }): Promise<boolean> {
    const db = await open()
    if (db === undefined) return true
    return await new Promise((resolve, reject) => {
      const transaction = db.transaction('kv', 'readwrite')
      const store = transaction.objectStore('kv')
      let verdict = false
      const read = store.get(key)
      read.onsuccess = () => {
        const decided = next(read.result as Lease | undefined)
        verdict = decided.verdict
        if (decided.write === null) store.delete(key)
        else if (decided.write !== undefined) store.put(decided.write, key)
      }
      transaction.oncomplete = () => { resolve(verdict) }
      transaction.onerror = transaction.onabort = () => { reject(transaction.error ?? new Error('IndexedDB transaction failed')) }
    })
  }

  return {
    async claim (key, owner, ms) {
      try {
        return await update(key, (lease) => lease === undefined || lease.owner === owner || lease.until <= Date.now()
          ? { write: { owner, until: Date.now() + ms }, verdict: true }
          : { verdict: false })
      } catch {
        return true
      }
    },
    async release (key, owner) {
      try {
        await update(key, (lease) => ({ write: lease?.owner === owner ? null : undefined, verdict: true }))
      } catch {}
    },
    async get<T> (key: string) {
      try {
        return await run<T>('readonly', (store) => store.get(key))
      } catch {
        return memory.get(key) as T | undefined
      }
    },
    async set (key, value) {
      if (value === undefined) memory.delete(key)
      else memory.set(key, value)
      try {
        await run('readwrite', (store) => value === undefined ? store.delete(key) : store.put(value, key))
      } catch {}
    }
  }
}
