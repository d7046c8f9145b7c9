import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { repoPath } from '../helpers/root.js'

// Messages and comments in lib/ and example/ that send a reader to a section ("see the README, "Server timeouts"")
// must name one that exists: a warning that points at a heading the README no longer has leaves the reader lost.

/** The headings of a markdown file, outside code blocks. */
function headings (path: string): string[] {
  const found: string[] = []
  let fenced = false
  for (const line of readFileSync(repoPath(path), 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const match = fenced ? null : /^#{1,6} (.+)$/.exec(line)
    if (match !== null) found.push(match[1]!.trim())
  }
  return found
}

function sources (dir: string): string[] {
  return readdirSync(repoPath(dir), { recursive: true, encoding: 'utf8' })
    .filter((path) => /\.(ts|js)$/.test(path))
    .map((path) => join(dir, path))
}

/** `README "X"`, `the README, "X"`, `example/docs/foo.md, "X"`: a file and a section named in quotes. */
const POINTER = /\b(README(?:\.md)?|(?:example\/)?[\w/.-]+\.md),? "([^"]+)"/g
/** Any guide named by its path. */
const GUIDE = /\b(example\/(?:docs|bench)\/[\w-]+\.md)\b/g

t.test('every section that lib/ and example/ point a reader to exists', async (t) => {
  let pointers = 0
  for (const file of [...sources('lib'), ...sources('example')]) {
    const text = readFileSync(repoPath(file), 'utf8')
    for (const [, doc, section] of text.matchAll(POINTER)) {
      pointers++
      const path = doc!.startsWith('README') ? 'README.md' : doc!
      t.ok(existsSync(repoPath(path)), `${file}: ${path} exists`)
      if (existsSync(repoPath(path))) t.ok(headings(path).includes(section!), `${file}: ${path} has a section "${section}"`)
    }
    for (const [, guide] of text.matchAll(GUIDE)) t.ok(existsSync(repoPath(guide!)), `${file}: ${guide} exists`)
  }
  t.ok(pointers >= 4, `${pointers} pointers checked`)
})
