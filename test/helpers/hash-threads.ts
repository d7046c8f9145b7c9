/**
 * Loaded into every test process by tap (package.json's tap "node-arg"): worker threads, such as the plugin's
 * hashing threads, start without @tapjs/mock's module hooks, and without @tapjs/processinfo's when the run
 * measures no coverage (the Node 22 and 24 legs, --disable-coverage). A worker inherits the test process's
 * --import flags and NODE_OPTIONS, and every test app starts a hashing thread: on Node 20 through HashPool a thread
 * that loads tap's mock hooks costs about 0.65 s of CPU more to start, and processinfo's about 0.1 s more. Mocks live
 * in the thread that asked for them, and no test mocks inside a worker. With coverage, processinfo stays: it is
 * what measures a thread's coverage (hash-worker.ts, hash-tasks.ts). Source maps reach the threads either way.
 */
import { createRequire } from 'node:module'

const workerThreads: typeof import('node:worker_threads') = createRequire(import.meta.url)('node:worker_threads')
const measuresCoverage = process.env._TAPJS_PROCESSINFO_COVERAGE_ !== '0'
const LEFT_OUT = measuresCoverage ? /[\\/]@tapjs[\\/]mock[\\/]/ : /[\\/]@tapjs[\\/](mock|processinfo)[\\/]/
const execArgv = process.execArgv.filter((arg) => !LEFT_OUT.test(arg))
// NODE_OPTIONS' entries, each whole if quoted (tap quotes them: "--import=file:///…/@tapjs/processinfo/…").
const nodeOptions = (process.env.NODE_OPTIONS ?? '').match(/(?:"[^"]*"|[^\s"])+/g) ?? []
const keptNodeOptions = nodeOptions.filter((option) => !LEFT_OUT.test(option))
const { Worker } = workerThreads

workerThreads.Worker = class extends Worker {
  constructor (filename: string | URL, options: import('node:worker_threads').WorkerOptions = {}) {
    const env = options.env ?? (keptNodeOptions.length === nodeOptions.length
      ? undefined
      : { ...process.env, NODE_OPTIONS: keptNodeOptions.join(' ') })
    super(filename, { ...options, execArgv: options.execArgv ?? execArgv, ...(env === undefined ? {} : { env }) })
  }
}
