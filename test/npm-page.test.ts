import { readFileSync } from 'node:fs'
import t from 'tap'
import { repoPath } from './helpers/root.js'

// The package ships dist/lib only: on the npm page the README's relative links (example/docs/…) work because
// npm resolves them against the repository package.json names.
t.test('package.json names the repository the README installs from, so its relative links resolve on the npm page', async (t) => {
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { repository?: { type?: string, url?: string }, files: string[] }
  const readme = readFileSync(repoPath('README.md'), 'utf8')
  const installed = /npm install github:([\w.-]+\/[\w.-]+)/.exec(readme)?.[1]
  t.ok(installed, 'the README installs from GitHub')
  t.same(pkg.repository, { type: 'git', url: `git+https://github.com/${installed}.git` })
  const relative = [...readme.matchAll(/\]\((example\/[^)#\s]+)/g)].map((match) => match[1]!)
  t.ok(relative.length > 0, `${relative.length} links into example/`)
  t.notOk(relative.some((link) => pkg.files.some((shipped) => link.startsWith(shipped))), 'none of them is shipped: the repository serves them')
})
