/**
 * Starts and stops the bench's child processes (the server under test, the argon2 ceiling) and reads
 * their memory and CPU use from /proc (Linux; elsewhere those read as undefined).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { SERVER_NODE_FLAGS, startProcess, type StartedProcess } from '../node-process.js'

export type Child = StartedProcess

/** Runs `node <flags> script` with `env` added to ours (`undefined` removes a variable); resolves once its output matches `ready`. */
export async function startChild (script: string, env: Record<string, string | undefined>, ready: RegExp, flags = SERVER_NODE_FLAGS, timeoutMs = 30_000): Promise<StartedProcess> {
  return await startProcess(process.execPath, [...flags, script], { ...process.env, ...env }, ready, timeoutMs)
}

/** Runs `node script` to completion and resolves with what it printed on stdout. */
export async function runChild (script: string, args: string[], env: Record<string, string | undefined>): Promise<string> {
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const [code] = await once(child, 'exit') as [number | null]
  if (code !== 0) throw new Error(`${script} exited with ${code}`)
  return output
}

function procStatus (pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    return undefined
  }
}

function kibField (status: string | undefined, name: string): number | undefined {
  const match = status === undefined ? null : new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)
  return match === null ? undefined : Number(match[1]) * 1024
}

/** Resident memory in bytes: now, and the peak since the process started (VmHWM). */
export function memoryOf (pid: number): { rss?: number, peakRss?: number } {
  const status = procStatus(pid)
  return { rss: kibField(status, 'VmRSS'), peakRss: kibField(status, 'VmHWM') }
}

const CLOCK_TICKS_PER_SECOND = 100

/**
 * CPU time (user + system) the process has used so far, in milliseconds: all its threads, or with
 * `mainThreadOnly` only the thread that runs JavaScript (the event loop).
 */
export function cpuTimeOf (pid: number, mainThreadOnly = false): number | undefined {
  try {
    const stat = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 1000 / CLOCK_TICKS_PER_SECOND
  } catch {
    return undefined
  }
}

/** The machine's CPU time so far, in clock ticks: busy (steal included), stolen by the hypervisor, total. */
export function cpuJiffies (): { busy: number, steal: number, total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!
    const values = line.trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal …: idle and iowait are not busy.
    const total = values.slice(0, 8).reduce((a, b) => a + b, 0)
    return { busy: total - values[3]! - values[4]!, steal: values[7]!, total }
  } catch {
    return undefined
  }
}

/**
 * How busy the machine's CPUs are while the bench itself is idle (0 = quiet, 1 = every core busy),
 * sampled over `ms`: other processes skew every number, so the report shows it.
 */
export async function backgroundCpu (ms = 1000): Promise<number | undefined> {
  const before = cpuJiffies()
  await new Promise(resolve => setTimeout(resolve, ms))
  const after = cpuJiffies()
  if (before === undefined || after === undefined || after.total === before.total) return undefined
  return (after.busy - before.busy) / (after.total - before.total)
}
