import type { ActivityRecord, PasswordAuthAccount, SessionEndReason, SessionState } from './types.js'

/**
 * Store methods that answer in the same turn (the memory stores': a Map lookup or two), registered by the store when
 * it is made. On the paths every request takes (the guard, Logout and its activity record), the promise, the deadline
 * and the microtask turns around a memory store's answer cost more than the answer; a caller that finds the method
 * here calls it directly, still failing closed if it throws (store-call.ts, callAtOnce). A method replaced on the
 * instance or overridden by a subclass is not the registered one: it is called as any store's, through storeCall.
 * A WeakMap, so nothing shows on the stores themselves.
 */
interface Registered {
  /** The method the store had when it registered, as the prototype defines it. */
  method: unknown
  atOnce: unknown
}

const registry = new WeakMap<object, Map<string, Registered>>()

/** `store[name]`, while it is `method`, answers as `atOnce` does, without a promise. */
export function registerAtOnce (store: object, name: string, method: unknown, atOnce: unknown): void {
  let methods = registry.get(store)
  if (methods === undefined) registry.set(store, methods = new Map())
  methods.set(name, { method, atOnce })
}

function atOnce<F> (store: object, name: string): F | undefined {
  const entry = registry.get(store)?.get(name)
  return entry !== undefined && (store as Record<string, unknown>)[name] === entry.method ? entry.atOnce as F : undefined
}

/** The session store's `get`, answering in the same turn; undefined for a store that needs a call. */
export function sessionGetAtOnce (store: object): ((sessionId: string) => SessionState | null) | undefined {
  return atOnce(store, 'get')
}

/** The session store's `end`, in the same turn; undefined for a store that needs a call. */
export function sessionEndAtOnce (store: object): ((sessionId: string, reason: SessionEndReason) => string | null) | undefined {
  return atOnce(store, 'end')
}

/** The account store's `findById`, in the same turn; undefined for a store that needs a call. */
export function accountByIdAtOnce (store: object): ((id: string) => PasswordAuthAccount | null) | undefined {
  return atOnce(store, 'findById')
}

/** The activity store's `add`, in the same turn; undefined for a store that needs a call. */
export function activityAddAtOnce (store: object): ((record: ActivityRecord) => void) | undefined {
  return atOnce(store, 'add')
}
