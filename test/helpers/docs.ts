import { readFileSync } from 'node:fs'
import { ROOT_URL } from './root.js'

const root = ROOT_URL

/** A file of the repository, as text. */
export function repoFile (path: string): string {
  return readFileSync(new URL(path, root), 'utf8')
}

/** The text between `begin` and `end` markers in `text` (each on a line of its own), without those lines. */
export function between (text: string, begin: string, end: string): string {
  const start = text.indexOf(`${begin}\n`)
  const stop = text.indexOf(`\n${end}`, start)
  if (start === -1 || stop === -1) throw new Error(`no ${begin} … ${end} block`)
  return text.slice(start + begin.length + 1, stop)
}

/** The code inside the README block `<!-- name:begin -->` … `<!-- name:end -->`, without its fence. */
export function readmeBlock (name: string): string {
  const block = between(repoFile('README.md'), `<!-- ${name}:begin -->`, `<!-- ${name}:end -->`)
  const match = /^```\w*\n([\s\S]*?)\n?```$/.exec(block)
  if (match === null) throw new Error(`README block ${name} is not one fenced code block`)
  return match[1]!
}
