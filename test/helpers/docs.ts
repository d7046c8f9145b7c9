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

/** The code inside the block `<!-- name:begin -->` … `<!-- name:end -->` of a markdown file, without its fence. */
export function docBlock (file: string, name: string): string {
  const block = between(repoFile(file), `<!-- ${name}:begin -->`, `<!-- ${name}:end -->`)
  const match = /^```\w*\n([\s\S]*?)\n?```$/.exec(block)
  if (match === null) throw new Error(`${file} block ${name} is not one fenced code block`)
  return match[1]!
}

/** A block of README.md. */
export function readmeBlock (name: string): string {
  return docBlock('README.md', name)
}

/** The guides under example/docs/, where the production and moving-in material lives. */
export const PRODUCTION_GUIDE = 'example/docs/production.md'
export const MOVING_IN_GUIDE = 'example/docs/moving-in.md'
