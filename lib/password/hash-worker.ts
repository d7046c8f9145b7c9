/**
 * The entry point of a hashing worker thread (piscina loads it by file name; see hash-pool.ts). The
 * costs, the pepper and the bcrypt module come once, as the thread's workerData.
 */
import { workerData } from 'node:worker_threads'
import { createHashTasks, type HashWorkerData } from './hash-tasks.js'
import { announceLoaded } from './thread-loaded.js'

export default createHashTasks(workerData as HashWorkerData)
announceLoaded()
