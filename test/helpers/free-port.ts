import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'

/** Where ports are picked from: below the range the kernel hands to outgoing connections (ephemeral ports). */
const LOWEST = 10_000

/**
 * The first port of the kernel's ephemeral range (Linux: /proc/sys/net/ipv4/ip_local_port_range; 32768 elsewhere).
 * A port in that range can be taken between the pick and its use by any outgoing connection's local end, and a client
 * retrying 127.0.0.1:<port> while nothing listens there (a server whose Redis is not up yet) can even connect to itself
 * (TCP simultaneous open) and hold it: a CI run lost a private redis-server that way ("did not start on port 37745").
 */
export function ephemeralStart (): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    if (Number.isSafeInteger(first) && first > LOWEST + 1000) return first
  } catch {}
  return 32_768
}

async function listenOn (port: number): Promise<Server | undefined> {
  const server = createServer()
  return await new Promise((resolve) => {
    server.once('error', () => { resolve(undefined) })
    server.listen(port, '127.0.0.1', () => { resolve(server) })
  })
}

/** A TCP port that was free a moment ago on 127.0.0.1, outside the ephemeral range. */
export async function freePort (): Promise<number> {
  const [port] = await freePorts(1)
  return port!
}

/**
 * `count` distinct TCP ports that were free a moment ago on 127.0.0.1 (held open together, so no repeats), picked at
 * random below the kernel's ephemeral range, where no outgoing connection can take them before the test listens.
 */
export async function freePorts (count: number): Promise<number[]> {
  const end = ephemeralStart()
  const servers: Server[] = []
  try {
    for (let tries = 0; servers.length < count; tries++) {
      if (tries >= 1000) throw new Error(`no free port found between ${LOWEST} and ${end - 1}`)
      const server = await listenOn(LOWEST + Math.floor(Math.random() * (end - LOWEST)))
      if (server !== undefined) servers.push(server)
    }
    return servers.map((server) => (server.address() as { port: number }).port)
  } finally {
    await Promise.all(servers.map(async (server) => await new Promise((resolve) => server.close(resolve))))
  }
}
