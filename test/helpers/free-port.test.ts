import { createServer } from 'node:net'
import t from 'tap'
import { ephemeralStart as readEphemeralStart, freePorts } from './free-port.js'

// The tests' own servers (private Redis, Redis Cluster nodes, PgBouncer, …) listen on these ports: outside the range
// the kernel gives outgoing connections, so none can take one first (free-port.ts).
t.test('free ports are distinct, below the ephemeral range, and free', async (t) => {
  const ephemeralStart = readEphemeralStart()
  t.ok(ephemeralStart > 10_000, `the ephemeral range starts at ${ephemeralStart}`)
  const ports = await freePorts(8)
  t.equal(new Set(ports).size, 8, 'eight distinct ports')
  for (const port of ports) t.ok(port >= 10_000 && port < ephemeralStart, `${port} is below ${ephemeralStart}`)
  for (const port of ports) {
    const server = createServer()
    await new Promise<void>((resolve, reject) => { server.once('error', reject).listen(port, '127.0.0.1', resolve) })
    await new Promise((resolve) => server.close(resolve))
  }
  t.pass('each could be listened on')
})
