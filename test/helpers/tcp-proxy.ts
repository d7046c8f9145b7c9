import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { freePort } from './free-port.js'
import type { Teardown } from './teardown.js'

/**
 * A TCP proxy to a real server, on a port of the test's own, that can simulate outages: `blackhole()`
 * (connections stay open but nothing moves), `cut()` (every connection dropped, new ones refused) and
 * `restore()`.
 */
export class TcpProxy {
  readonly port: number
  readonly #target: { host: string, port: number }
  readonly #pairs = new Set<[Socket, Socket]>()
  #server: Server | undefined
  #blackholed = false

  private constructor (port: number, target: { host: string, port: number }) {
    this.port = port
    this.#target = target
  }

  static async create (t: Teardown, target: { host: string, port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), target)
    t.teardown(async () => { await proxy.cut() })
    await proxy.restore()
    return proxy
  }

  async restore (): Promise<void> {
    if (this.#blackholed) for (const pair of this.#pairs) connect(pair)
    this.#blackholed = false
    if (this.#server !== undefined) return
    const server = createServer((client) => { this.#accept(client) })
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve))
    this.#server = server
  }

  /** Everything stops moving, both on open connections and on new ones, which are accepted. */
  blackhole (): void {
    if (!this.#blackholed) for (const pair of this.#pairs) disconnect(pair)
    this.#blackholed = true
  }

  async cut (): Promise<void> {
    const server = this.#server
    this.#server = undefined
    for (const [client, upstream] of this.#pairs) { client.destroy(); upstream.destroy() }
    this.#pairs.clear()
    if (server !== undefined) await new Promise((resolve) => server.close(resolve))
  }

  #accept (client: Socket): void {
    const upstream = createConnection(this.#target)
    const pair: [Socket, Socket] = [client, upstream]
    this.#pairs.add(pair)
    if (this.#blackholed) disconnect(pair)
    else connect(pair)
    const close = (): void => { client.destroy(); upstream.destroy(); this.#pairs.delete(pair) }
    client.on('error', close).on('close', close)
    upstream.on('error', close).on('close', close)
  }
}

function connect ([client, upstream]: [Socket, Socket]): void {
  client.pipe(upstream)
  upstream.pipe(client)
}

// Unpiped and paused: data waits in the sockets' buffers until connect() pipes them again.
function disconnect ([client, upstream]: [Socket, Socket]): void {
  client.unpipe(upstream)
  upstream.unpipe(client)
  client.pause()
  upstream.pause()
}
