import { parentPort, threadId } from 'node:worker_threads'

/**
 * A hashing thread's word that its modules are loaded. Ending a thread while Node still loads its ES modules
 * aborts the whole process (SIGABRT, "IsGraphAsync must be used on an instantiated module", seen on Node 20, 22
 * and 24), so HashPool.close() waits for this word from every started thread before it ends them.
 */
export const THREAD_LOADED = 'fastify-password-auth:hash-thread-loaded'

export interface ThreadLoaded { [THREAD_LOADED]: number }

/** Called last by a worker's entry module: everything it imports has been evaluated by then. */
export function announceLoaded (): void {
  parentPort?.postMessage({ [THREAD_LOADED]: threadId } satisfies ThreadLoaded)
}

export function loadedThreadOf (message: unknown): number | undefined {
  const id = (message as Partial<ThreadLoaded> | null)?.[THREAD_LOADED]
  return typeof id === 'number' ? id : undefined
}
