import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { readmeBlock, repoFile } from '../../helpers/docs.js'
import { startServer } from '../../helpers/server-process.js'

// The README's walk-through of the demo server, run as written against `npm start` (built): only the
// printed password and the address are filled in.
t.test('the README\'s curl lines work against the demo server', async (t) => {
  const server = await startServer(t)
  const password = /Demo account: demo@example\.com \/ (\S+)/.exec(server.output())?.[1]
  t.ok(password, 'the demo prints its password')
  // The address the README opens is the one the server prints: a name, since browsers refuse passkeys on an IP address.
  const readme = repoFile('README.md')
  const demoSection = readme.slice(readme.indexOf('## The demo server'), readme.indexOf('## Guarding your routes'))
  const opened = [...demoSection.matchAll(/`(http:\/\/[^`/]+)\/?`/g)].map((match) => new URL(match[1]!))
  t.ok(opened.length >= 2, 'the section names the address it prints and opens')
  for (const url of opened) t.equal(url.hostname, new URL(server.url).hostname, `${url.href}: the printed address's host`)
  t.equal(new URL(server.url).hostname, 'localhost')
  const script = readmeBlock('demo-curl')
  t.match(script, /^PASSWORD='demo-…'/, 'the block starts with the line a reader fills in')
  const filled = script
    .replace(/^PASSWORD='demo-…'/, `PASSWORD='${password!}'`)
    .replaceAll('localhost:3000', new URL(server.url).host)
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', filled], { timeout: 30_000 })
  const lines = stdout.trim().split('\n')
  t.match(JSON.parse(lines[0]!), { email: 'demo@example.com', active: true, credentialVersion: 0 }, '/me answers the account')
  t.equal(lines[1], 'same next refresh token', 'the grace answer')
  t.equal(lines[2], '204', 'logout')
  t.equal(JSON.parse(lines[3]!).code, 'FST_PWAUTH_TOKEN_INVALID', 'the access token died with the session')
  t.equal(JSON.parse(lines[4]!).code, 'FST_PWAUTH_REFRESH_TOKEN_INVALID', 'so did its refresh token')
  t.equal(lines[5], '204', 'password change')
  t.equal(lines.length, 6)
})
