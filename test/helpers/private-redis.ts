import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { freePort } from './free-port.js'
import type { Teardown } from './teardown.js'

/**
 * A redis-server of the test's own on a free port (never the shared one), which the test can stop,
 * freeze (SIGSTOP) and start again on the same port.
 */
export class PrivateRedis {
  readonly port: number
  #process: ChildProcess | undefined

  private constructor (port: number) {
    this.port = port
  }

  static async create (t: Teardown): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort())
    t.teardown(async () => { await redis.stop() })
    return redis
  }

  get url (): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Starts it without persistence; `args` (e.g. `['--appendonly', 'yes', '--dir', dir]`) override that. */
  async start (args: string[] = []): Promise<void> {
    this.#process = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], { stdio: 'ignore' })
    const probe = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 })
    probe.on('error', () => {}) // refused while the server starts: the loop below retries
    try {
      for (let i = 0; i < 100; i++) {
        try { await probe.connect(); await probe.ping(); return } catch { probe.disconnect(); await new Promise((resolve) => setTimeout(resolve, 50)) }
        const exitCode = this.#process.exitCode
        if (exitCode !== null) throw new Error(`redis-server exited with code ${exitCode} on port ${this.port} (taken by another process?)`)
      }
      throw new Error(`redis-server did not start on port ${this.port}`)
    } finally {
      probe.disconnect()
    }
  }

  async stop (): Promise<void> {
    const child = this.#process
    this.#process = undefined
    if (child === undefined || child.exitCode !== null) return
    child.kill('SIGCONT')
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }

  freeze (): void { this.#process?.kill('SIGSTOP') }
  thaw (): void { this.#process?.kill('SIGCONT') }
}
