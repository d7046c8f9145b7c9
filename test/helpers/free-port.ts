import { createServer, type Server } from 'node:net'

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort (): Promise<number> {
  const [port] = await freePorts(1)
  return port!
}

/** `count` distinct TCP ports that were free a moment ago on 127.0.0.1 (held open together, so no repeats). */
export async function freePorts (count: number): Promise<number[]> {
  const servers: Server[] = []
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer()
      servers.push(server)
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    }
    return servers.map((server) => (server.address() as { port: number }).port)
  } finally {
    await Promise.all(servers.map(async (server) => await new Promise((resolve) => server.close(resolve))))
  }
}
