import { readFileSync } from 'node:fs'
import t from 'tap'
import { repoPath } from '../helpers/root.js'

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

t.test('the README\'s tarball route builds the clone with its devDependencies first, as the prepare script asks', async (t) => {
  const readme = readFileSync(repoPath('README.md'), 'utf8')
  const install = readme.slice(readme.indexOf('## Install'), readme.indexOf('## Quick start'))
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { scripts: Record<string, string> }
  t.match(pkg.scripts.prepare, /run npm ci \(or npm install\) first, then npm pack/)
  t.match(install, /npm ci && npm pack/, 'npm ci before npm pack')
  t.notMatch(install, /\.\.\/fastify-password-auth\//, 'no guess at where the clone is')
})

t.test('the npm page\'s description and the plugin\'s own comment describe today\'s features, not four routes', async (t) => {
  const { description } = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { description: string }
  const index = readFileSync(repoPath('lib/index.ts'), 'utf8')
  const comment = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\nconst fastifyPasswordAuth/.exec(index)?.[1] ?? ''
  const readme = readFileSync(repoPath('README.md'), 'utf8').split('\n\n')[1]!
  for (const [where, text] of [['package.json description', description], ['lib/index.ts', comment], ['README intro', readme]] as const) {
    for (const feature of [/passkeys/i, /two factors/i, /sign-up|registration/i, /password reset/i, /refresh/i, /account self-service/i]) {
      t.match(text, feature, `${where} names ${feature.source}`)
    }
  }
})
