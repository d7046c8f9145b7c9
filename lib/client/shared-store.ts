/**
 * What every tab of the origin must read at once, kept in IndexedDB: a write committed by one tab is what
 * the next reader in any tab sees (localStorage reaches other tabs late in Chromium, so tabs refreshed twice).
 * Without IndexedDB (or when it fails), a memory map: this tab alone, which is still safe (see tabs.ts).
 */
export interface SharedStore {
  get: <T>(key: string) => Promise<T | undefined>
  /** `undefined` deletes. */
  set: (key: string, value: unknown) => Promise<void>
}

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

  return {
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
