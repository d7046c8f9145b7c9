import { execFile } from 'node:child_process'
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { repoPath } from '../../helpers/root.js'

// `npm pack` in a fresh clone without the devDependencies ran `tsc` and failed with "tsc: not found".
t.test('prepare without the devDependencies says what to do instead of "tsc: not found"', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'prepare-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await copyFile(repoPath('package.json'), join(dir, 'package.json'))
  const { code, output } = await new Promise<{ code: number | null, output: string }>((resolve) => {
    execFile('npm', ['run', 'prepare'], { cwd: dir, env: { PATH: process.env.PATH, HOME: dir } }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : (err as { code?: number }).code ?? 1, output: stdout + stderr })
    })
  })
  t.not(code, 0)
  t.match(output, /building needs the devDependencies \(TypeScript\): run npm ci/)
  t.notMatch(output, /tsc: not found/)
})
