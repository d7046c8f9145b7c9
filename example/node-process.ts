import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'

/**
 * Node's flags for a server under a flood of requests (example/bench/README.md, "Memory"): V8 grows its
 * young generation to 2 × 16 MiB and keeps it; 2 × 8 MiB peaks lower at no cost in throughput measured.
 * The bench's own server runs with these alone.
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=8']

/**
 * `npm start`'s flags (and the bench's and tests' example server): the same. A login flood's memory is
 * bounded by the server itself while the flood lasts (flood-memory.ts): `--heap-growing-percent=30` here
 * did it too, but made every request pay more full collections.
 */
export const EXAMPLE_SERVER_NODE_FLAGS = [...SERVER_NODE_FLAGS]

/** A child process started by the bench or the tests. */
export interface StartedProcess {
  process: ChildProcess
  /** Everything the process printed so far, stdout and stderr together. */
  output: () => string
  /** SIGTERM, then SIGKILL if it has not exited 5 s later. */
  stop: () => Promise<void>
  /** What `ready` matched in its output. */
  match: RegExpExecArray
}

/** Spawns `command args` with exactly `env`; resolves once its stdout matches `ready`, rejects (and stops it) otherwise. */
export async function startProcess (command: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp, timeoutMs: number): Promise<StartedProcess> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  }
  try {
    const match = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`${args.at(-1) ?? command} did not get ready in ${timeoutMs} ms:\n${output}`)) }, timeoutMs)
      const onData = (): void => {
        const found = ready.exec(output)
        if (found !== null) {
          clearTimeout(timer)
          child.stdout.off('data', onData)
          resolve(found)
        }
      }
      child.stdout.on('data', onData)
      child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${args.at(-1) ?? command} exited with ${code}:\n${output}`)) })
    })
    return { process: child, output: () => output, stop, match }
  } catch (err) {
    await stop()
    throw err
  }
}
