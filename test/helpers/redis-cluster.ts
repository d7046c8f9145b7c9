import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Cluster, Redis, type ClusterOptions } from 'ioredis'
import { freePorts } from './free-port.js'
import type { Teardown } from './teardown.js'

const MASTERS = 3
const NODE_START_MS = 60_000
const CREATE_MS = 60_000
const CONVERGE_MS = 30_000
const STOP_GRACE_MS = 2_000

const run = promisify(execFile)

/**
 * Why the Cluster tests cannot run here (redis-server or redis-cli missing), or false. In CI that is an
 * error instead: these tests must never be skipped there.
 */
export const redisClusterUnavailable = await (async (): Promise<string | false> => {
  for (const tool of ['redis-server', 'redis-cli']) {
    try {
      await run(tool, ['--version'], { timeout: 10_000 })
    } catch (err) {
      const reason = `${tool} is not available (${(err as Error).message}); install Redis to run the Cluster tests`
      if (process.env.CI !== undefined) throw new Error(`CI: ${reason}`)
      return reason
    }
  }
  return false
})()

export interface RedisCluster {
  /** The masters' client ports on 127.0.0.1. */
  ports: number[]
  /** A new ioredis Cluster client on these nodes, disconnected in teardown. */
  client: (options?: ClusterOptions) => Cluster
}

interface Node {
  port: number
  child: ChildProcess
  /** Everything the node printed so far. */
  output: () => string
}

/**
 * A Redis Cluster of the test's own: three masters (no replicas) on free ports, in a fresh temp dir,
 * each a child process of this one. Resolves once every node reports cluster_state:ok with all 16384
 * slots covered. Teardown disconnects the clients, stops every node by PID and removes the dir.
 */
export async function startRedisCluster (t: Teardown): Promise<RedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'fpa-redis-cluster-'))
  const nodes: Node[] = []
  const clients: Cluster[] = []
  // If this process dies without running teardown, do not leave servers behind.
  const killOnExit = (): void => { for (const { child } of nodes) child.kill('SIGKILL') }
  process.once('exit', killOnExit)
  t.teardown(async () => {
    for (const client of clients) client.disconnect()
    await Promise.all(nodes.map(async (node) => { await stopNode(node) }))
    process.removeListener('exit', killOnExit)
    await rm(dir, { recursive: true, force: true })
  })

  const ports = await freePorts(MASTERS * 2) // a client port and a cluster-bus port per node
  const started = await Promise.allSettled(Array.from({ length: MASTERS }, async (_, i) => await startNode(dir, ports[i]!, ports[MASTERS + i]!)))
  for (const result of started) if (result.status === 'fulfilled') nodes.push(result.value)
  for (const result of started) if (result.status === 'rejected') throw result.reason
  const logs = (): string => nodes.map((node) => `--- node ${node.port}\n${node.output()}`).join('\n')

  const addresses = nodes.map((node) => `127.0.0.1:${node.port}`)
  try {
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], { timeout: CREATE_MS })
  } catch (err) {
    const { stdout = '', stderr = '', message } = err as { stdout?: string, stderr?: string, message: string }
    throw new Error(`redis-cli --cluster create failed: ${message}\n${stdout}${stderr}\n${logs()}`)
  }
  await waitUntilConverged(nodes.map((node) => node.port), logs)

  return {
    ports: nodes.map((node) => node.port),
    client: (options = {}) => {
      const client = new Cluster(nodes.map((node) => ({ host: '127.0.0.1', port: node.port })), {
        slotsRefreshTimeout: 5_000, // the default second is short on a loaded machine
        ...options,
        redisOptions: { connectTimeout: 10_000, ...options.redisOptions }
      })
      clients.push(client)
      return client
    }
  }
}

async function startNode (dir: string, port: number, busPort: number): Promise<Node> {
  const child = spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir,
    '--cluster-enabled', 'yes', '--cluster-port', String(busPort), '--cluster-config-file', `nodes-${port}.conf`,
    '--save', '', '--appendonly', 'no'
  ], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const node = { port, child, output: () => output }

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`redis-server on port ${port} not ready in ${NODE_START_MS} ms:\n${output}`)) }, NODE_START_MS)
    const onData = (): void => {
      if (output.includes('Ready to accept connections')) { clearTimeout(timer); resolve() }
    }
    child.stdout!.on('data', onData)
    child.once('error', (err) => { clearTimeout(timer); reject(err) })
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`redis-server on port ${port} exited (${code ?? signal}):\n${output}`)) })
  }).catch(async (err: unknown) => {
    await stopNode(node)
    throw err
  })
  return node
}

async function stopNode ({ child }: Node): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
  await exited
  clearTimeout(timer)
}

/** Polls CLUSTER INFO on every node until all agree: state ok, every slot served, every node known. */
async function waitUntilConverged (ports: number[], logs: () => string): Promise<void> {
  const probes = ports.map((port) => new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000 }))
  const infos = new Map<number, string>()
  try {
    const deadline = Date.now() + CONVERGE_MS
    while (Date.now() < deadline) {
      await Promise.all(probes.map(async (probe, i) => {
        infos.set(ports[i]!, await probe.cluster('INFO').catch((err: Error) => `error: ${err.message}`))
      }))
      if ([...infos.values()].every(converged)) return
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    const report = [...infos].map(([port, info]) => `--- CLUSTER INFO on ${port}\n${info}`).join('\n')
    throw new Error(`the Redis Cluster did not converge in ${CONVERGE_MS} ms:\n${report}\n${logs()}`)
  } finally {
    for (const probe of probes) probe.disconnect()
  }
}

function converged (info: string): boolean {
  return info.includes('cluster_state:ok') &&
    info.includes('cluster_slots_ok:16384') &&
    info.includes(`cluster_known_nodes:${MASTERS}`)
}
