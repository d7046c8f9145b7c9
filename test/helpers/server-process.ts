import { spawn } from 'node:child_process'
import { EXAMPLE_SERVER_NODE_FLAGS, startProcess, type StartedProcess } from '../../example/node-process.js'
import { once } from 'node:events'
import type { Teardown } from './teardown.js'
import { repoPath } from './root.js'

const SERVER = repoPath('dist/example/server.js')

/** How long a server may take to listen: a loaded CI machine has taken more than 10 s to start a hashing thread. */
const START_MS = 60_000

export interface ServerProcess extends StartedProcess {
  url: string
}

/**
 * Starts the built example server (`npm start` without the build) on a free port with `env`, and
 * resolves once it listens. Stopped in teardown. `script` runs another server printing "listening on <url>"
 * (or logging Fastify's "Server listening at <url>").
 * `fileLimit` starts it under `ulimit -n <fileLimit>`.
 */
export async function startServer (t: Teardown, env: Record<string, string> = {}, script = SERVER, { fileLimit }: { fileLimit?: number } = {}): Promise<ServerProcess> {
  const [command, args] = fileLimit === undefined
    ? [process.execPath, [...EXAMPLE_SERVER_NODE_FLAGS, script]]
    : ['bash', ['-c', `ulimit -n ${fileLimit} && exec "$0" "$@"`, process.execPath, ...EXAMPLE_SERVER_NODE_FLAGS, script]]
  // "listening on <url>" is ours; "listening at <url>" is Fastify's own log line.
  const started = await startProcess(command, args, { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'warn', ...env },
    /listening (?:on|at) (http:\/\/[^\s"]+)/, START_MS)
  t.teardown(started.stop)
  return { ...started, url: started.match[1]! }
}

/** Runs the example server expecting it to fail at start; resolves with its exit code and output. */
export async function failingStart (env: Record<string, string>): Promise<{ code: number | null, output: string }> {
  const child = spawn(process.execPath, [SERVER], { env: { PATH: process.env.PATH, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const timer = setTimeout(() => child.kill('SIGKILL'), START_MS)
  const [code] = await once(child, 'exit') as [number | null]
  clearTimeout(timer)
  return { code, output }
}

export async function post (url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return await fetch(url, {
    method: 'POST',
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000)
  })
}
