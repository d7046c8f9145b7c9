/**
 * Where a .cpuprofile's time went, as text: self time and inclusive time by function, as shares of the
 * time the thread was busy (idle left out).
 *
 *   node dist/example/bench/profile-summary.js <file.cpuprofile> [rows, default 30] [regexp filtering the inclusive list]
 */
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

interface ProfileNode {
  id: number
  callFrame: { functionName: string, url: string, lineNumber: number }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

export interface ProfileSummary {
  busyMs: number
  idleMs: number
  /** [function, share of busy time], largest first. */
  self: Array<[string, number]>
  inclusive: Array<[string, number]>
}

function label ({ callFrame: { functionName, url, lineNumber } }: ProfileNode): string {
  const where = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, '')
  return `${functionName === '' ? '(anonymous)' : functionName} ${where}:${lineNumber + 1}`
}

export function summarizeProfile (profile: CpuProfile): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parentOf = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let busy = 0
  let idle = 0
  for (let i = 0; i < profile.samples.length; i++) {
    // timeDeltas[i] is the time before sample i; the time sample i stands for is the next delta.
    const micros = profile.timeDeltas[i + 1] ?? 0
    const node = byId.get(profile.samples[i]!)!
    const name = label(node)
    if (node.callFrame.functionName === '(idle)') {
      idle += micros
      continue
    }
    busy += micros
    self.set(name, (self.get(name) ?? 0) + micros)
    const seen = new Set<string>()
    for (let id: number | undefined = node.id; id !== undefined; id = parentOf.get(id)) {
      const frame = label(byId.get(id)!)
      if (seen.has(frame)) continue // recursion counts once
      seen.add(frame)
      inclusive.set(frame, (inclusive.get(frame) ?? 0) + micros)
    }
  }
  const ranked = (times: Map<string, number>): Array<[string, number]> =>
    [...times].map(([name, micros]): [string, number] => [name, micros / busy]).sort((a, b) => b[1] - a[1])
  return { busyMs: busy / 1000, idleMs: idle / 1000, self: ranked(self), inclusive: ranked(inclusive) }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [file, rows = '30', filter] = process.argv.slice(2)
  if (file === undefined) {
    console.error('usage: profile-summary.js <file.cpuprofile> [rows] [regexp]')
    process.exit(2)
  }
  const summary = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile)
  const pattern = filter === undefined ? undefined : new RegExp(filter)
  const percent = (share: number): string => `${(share * 100).toFixed(1).padStart(5)} %`
  console.log(`busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms`)
  console.log('self time:')
  for (const [name, share] of summary.self.slice(0, Number(rows))) console.log(`${percent(share)}  ${name}`)
  console.log(`inclusive time${pattern === undefined ? '' : ` (${filter})`}:`)
  for (const [name, share] of summary.inclusive.filter(([name]) => pattern?.test(name) ?? true).slice(0, Number(rows))) {
    console.log(`${percent(share)}  ${name}`)
  }
}
