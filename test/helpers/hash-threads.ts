/**
 * Loaded into every test process by tap (package.json's tap "node-arg"): worker threads, such as the plugin's
 * hashing threads, start without @tapjs/mock's module hooks. A worker inherits the test process's --import
 * flags, and a thread that loads tap's mock hooks costs about 0.65 s of CPU more to start (1.0 s instead of
 * 0.35 s, measured on Node 20 through HashPool): every test app starts one, so that was about half of an
 * in-process file's time. Mocks live in the thread that asked for them, and no test mocks inside a worker;
 * coverage (@tapjs/processinfo) and source maps still reach the threads.
 */
import { createRequire } from 'node:module'

const workerThreads: typeof import('node:worker_threads') = createRequire(import.meta.url)('node:worker_threads')
const MOCK_HOOKS = /[\\/]@tapjs[\\/]mock[\\/]/
const execArgv = process.execArgv.filter((arg) => !MOCK_HOOKS.test(arg))
const { Worker } = workerThreads

workerThreads.Worker = class extends Worker {
  constructor (filename: string | URL, options: import('node:worker_threads').WorkerOptions = {}) {
    super(filename, { ...options, execArgv: options.execArgv ?? execArgv })
  }
}
