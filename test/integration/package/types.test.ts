import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { ROOT, repoPath } from '../../helpers/root.js'

// `npm test` builds first (pretest), so dist/ is what a consumer would install.
const PROJECTS = [
  ['a consumer compiles against the built package with skipLibCheck off', 'tsconfig.json'],
  ['a host with its own authenticate and request.account compiles with the decorators renamed', 'tsconfig.renamed.json'],
  ['a browser app (DOM, no Node types) compiles against fastify-password-auth/client with skipLibCheck off', 'tsconfig.client.json']
] as const

for (const [name, config] of PROJECTS) {
  t.test(name, async (t) => {
    const tsc = repoPath('node_modules/typescript/bin/tsc')
    const project = repoPath('test/types', config)
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', project], { timeout: 120_000 }).then(
      () => ({ code: 0, output: '' }),
      (err: { code: number, stdout: string }) => ({ code: err.code, output: err.stdout })
    )
    t.equal(result.output, '', 'no type errors')
    t.equal(result.code, 0)
  })
}

t.test('CommonJS code can require() the package and its testing entry', async (t) => {
  const script = "const m = require('fastify-password-auth'); const c = require('fastify-password-auth/testing');" +
    "process.stdout.write([typeof m.default, m.default === m.fastifyPasswordAuth, typeof c.accountStoreContract].join(','))"
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: ROOT })
  t.equal(stdout, 'function,true,function')
})
