import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t from 'tap'
import { repoPath } from '../helpers/root.js'

const DOCS = ['README.md', 'example/docs/production.md', 'example/docs/moving-in.md', 'example/docs/security.md',
  'example/docs/example-server.md', 'example/docs/password-reset.md', 'example/docs/two-factors.md', 'example/bench/README.md', 'example/docs/account.md',
  'example/docs/passkeys.md', 'example/docs/devices.md', 'example/docs/breached-passwords.md', 'example/docs/browser-client.md',
  'example/docs/sqlite.md', 'example/docs/mysql.md', 'example/docs/orms.md']

/** GitHub's anchor of a heading. */
function slug (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, '').replaceAll(' ', '-')
}

/** The headings of a markdown file, outside code blocks. */
function headings (text: string): Array<{ level: number, title: string }> {
  const found: Array<{ level: number, title: string }> = []
  let fenced = false
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const match = fenced ? null : /^(#{1,6}) (.+)$/.exec(line)
    if (match !== null) found.push({ level: match[1]!.length, title: match[2]! })
  }
  return found
}

const read = (path: string): string => readFileSync(repoPath(path), 'utf8')

t.test('the README stays short: at most 700 lines', async (t) => {
  const lines = read('README.md').split('\n').length
  t.ok(lines <= 700, `${lines} lines`)
})

t.test('the README\'s contents line lists every section, in order', async (t) => {
  const readme = read('README.md')
  const contents = readme.slice(readme.indexOf('Contents:'), readme.indexOf('\n\n', readme.indexOf('Contents:')))
  const listed = [...contents.matchAll(/\]\(#([\w-]+)\)/g)].map((match) => match[1])
  t.same(listed, headings(readme).filter(({ level }) => level === 2).map(({ title }) => slug(title)))
})

t.test('every relative link of the README and the guides points at a file that exists, and every anchor at a heading', async (t) => {
  for (const doc of DOCS) {
    const text = read(doc)
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue
      const [path, anchor] = target!.split('#') as [string, string | undefined]
      const file = path === '' ? doc : join(dirname(doc), path)
      t.ok(existsSync(repoPath(file)), `${doc}: ${target} exists`)
      if (anchor !== undefined && existsSync(repoPath(file)) && file.endsWith('.md')) {
        t.ok(headings(read(file)).some(({ title }) => slug(title) === anchor), `${doc}: ${target} names a heading`)
      }
    }
  }
})
